package io.configwatch.detect;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * A bounded least-recently-used memo of a function of one string whose answer may be null (the
 * per-distinct-value caches of {@code SecretScan} and {@code Sensitivity}; Python caches the same
 * way with {@code functools.lru_cache}). One thread at a time, as an engine instance is used.
 */
final class SecretScanCache {
  private static final String NONE = new String("none");  // a null answer, told apart by identity

  private final Function<String, String> fn;
  private final LinkedHashMap<String, String> memo;

  SecretScanCache(int capacity, Function<String, String> fn) {
    this.fn = fn;
    this.memo = new LinkedHashMap<>(256, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
        return size() > capacity;
      }
    };
  }

  /** {@code fn(key)}, computed once per distinct key while it stays in the memo; null in, null out. */
  String get(String key) {
    if (key == null) {
      return null;
    }
    String hit = memo.get(key);
    if (hit == null) {
      String answer = fn.apply(key);
      hit = answer == null ? NONE : answer;
      memo.put(key, hit);
    }
    return hit == NONE ? null : hit;
  }
}
