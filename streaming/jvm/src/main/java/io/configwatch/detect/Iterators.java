package io.configwatch.detect;

import java.util.Iterator;
import java.util.function.Function;

/** Iterators over a partition's rows, as Spark hands them to {@code mapPartitions}. */
final class Iterators {
  private Iterators() {}

  /** {@code f} of each element of {@code in}, lazily. */
  static <A, B> Iterator<B> map(Iterator<A> in, Function<A, B> f) {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return in.hasNext();
      }

      @Override
      public B next() {
        return f.apply(in.next());
      }
    };
  }
}
