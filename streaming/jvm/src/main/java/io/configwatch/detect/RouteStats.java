package io.configwatch.detect;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.util.AccumulatorV2;

/**
 * What the route stage counted, summed over tasks: records, valid and invalid ones, GX failures
 * per expectation ({@code failed:<name>}) and the nanoseconds spent decoding and checking. The
 * driver reads it after each batch's write (the twin of {@code streaming.job.accounting}'s
 * accumulator of {@code udfs.decode.DecodeStats}).
 */
public final class RouteStats extends AccumulatorV2<Map<String, Long>, Map<String, Long>> {
  private static final long serialVersionUID = 1L;
  private final HashMap<String, Long> counts = new HashMap<>();

  @Override
  public boolean isZero() {
    synchronized (counts) {
      return counts.isEmpty();
    }
  }

  @Override
  public RouteStats copy() {
    RouteStats out = new RouteStats();
    out.merge(this);
    return out;
  }

  @Override
  public void reset() {
    synchronized (counts) {
      counts.clear();
    }
  }

  @Override
  public void add(Map<String, Long> v) {
    synchronized (counts) {
      v.forEach((k, n) -> counts.merge(k, n, Long::sum));
    }
  }

  @Override
  public void merge(AccumulatorV2<Map<String, Long>, Map<String, Long>> other) {
    add(other.value());
  }

  @Override
  public Map<String, Long> value() {
    synchronized (counts) {
      return new HashMap<>(counts);
    }
  }
}
