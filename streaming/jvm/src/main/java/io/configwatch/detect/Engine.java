package io.configwatch.detect;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The parts a task needs (decoder, GX verdicts, detector), built once per executor thread and
 * spec: building them compiles patterns and profiles, and their caches pay off across tasks.
 * The parts are not thread-safe, so every thread has its own.
 */
final class Engine {
  private static final Map<String, ThreadLocal<Engine>> BY_SPEC = new ConcurrentHashMap<>();

  final Decoder decoder;
  final Expectations expectations;
  final Detector detector;

  private Engine(Knowledge knowledge, Keyed keyed) {
    decoder = Decoder.of(knowledge);
    expectations = Expectations.of(knowledge);
    detector = new Detector(knowledge, keyed);
  }

  /** This thread's engine for {@code knowledge} under {@code keyed}. */
  static Engine get(Knowledge knowledge, Keyed keyed) {
    String id = knowledge.digest() + "/" + keyed.digest();
    return BY_SPEC.computeIfAbsent(id, k -> ThreadLocal.withInitial(() -> new Engine(knowledge, keyed))).get();
  }
}
