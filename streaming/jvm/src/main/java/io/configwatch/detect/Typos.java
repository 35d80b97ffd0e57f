package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Likely typos: the twin of {@code udfs.rules.typos} ({@code edit_distance}, {@code nearest_known},
 * {@code typo_findings} for one push). An unknown key within the bounded optimal-string-alignment
 * distance of a key its profile knows (ties: the first in code point order) is a finding, for clients
 * that ignore unknown keys. Distances count code points. Cached per (profile, key); not thread-safe.
 */
public final class Typos implements Serializable {
  private static final long serialVersionUID = 1L;

  /** The nearest known key and its distance. */
  record Match(String name, int distance) implements Serializable {}

  private record Key(String profile, String key) implements Serializable {}

  private static final Match NONE = new Match(null, -1);

  private final String rule;
  private final String message;
  private final int maxDistance;
  private final int shortKey;
  private final String ignores;
  private transient Map<Key, Match> cache;

  private Typos(Knowledge knowledge, KeySets keySets) {
    JsonNode section = knowledge.section("typos");
    rule = section.get("rule").asText();
    message = section.get("message").asText();
    maxDistance = section.get("max_distance").asInt();
    shortKey = section.get("short_key").asInt();
    ignores = keySets.ignoresUnknownKeys();
    knowledge.rule(rule); // the catalog knows it
  }

  public static Typos of(Knowledge knowledge, KeySets keySets) {
    return new Typos(knowledge, keySets);
  }

  /** {@code typo_findings} for one push: keys its entry keys, custom per entry, safe per entry (key == safe_key). */
  public List<RawFinding> findings(Profile profileOrNull, List<String> keys, boolean[] custom, boolean[] safe) {
    if (profileOrNull == null || !ignores.equals(profileOrNull.unknownKeys())) {
      return List.of();
    }
    List<RawFinding> out = new ArrayList<>(0);
    for (int i = 0; i < keys.size(); i++) {
      String key = keys.get(i);
      if (!custom[i] || !safe[i] || key == null) {
        continue;
      }
      Match m = nearestKnown(profileOrNull, key);
      if (m == null) {
        continue;
      }
      Map<String, Object> values = Map.of("key", key, "distance", Integer.toString(m.distance()), "name", m.name());
      Map<String, Object> evidence = new LinkedHashMap<>();
      evidence.put("suggestion", m.name());
      evidence.put("distance", (long) m.distance());
      out.add(new RawFinding(rule, List.of(key), TyposFormat.format(message, values), evidence));
    }
    return out;
  }

  /** {@code nearest_known}: the closest known key of the profile within the bound, or null. */
  Match nearestKnown(Profile profile, String key) {
    if (cache == null) {
      cache = KeySets.lru(65536);
    }
    Key k = new Key(profile.id(), key);
    Match m = cache.get(k);
    if (m == null) {
      m = compute(profile, key);
      cache.put(k, m == null ? NONE : m);
      return m;
    }
    return m == NONE ? null : m;
  }

  private Match compute(Profile profile, String key) {
    int[] a = key.codePoints().toArray();
    int bound = a.length <= shortKey ? 1 : maxDistance;
    List<String> names = new ArrayList<>(profile.keys().keySet());
    for (Map.Entry<String, Set<String>> p : profile.prefixes().entrySet()) {
      if (key.startsWith(p.getKey()) && !p.getValue().isEmpty()) {
        for (String name : p.getValue()) {
          names.add(p.getKey() + name);
        }
      }
    }
    String best = null;
    int bestD = Integer.MAX_VALUE;
    for (String name : names) {
      if (name.equals(key)) {
        return null;
      }
      int d = editDistance(a, name.codePoints().toArray(), bound);
      if (d <= bound && (d < bestD || (d == bestD && PyJson.compareCodePoints(name, best) < 0))) {
        best = name;
        bestD = d;
      }
    }
    return best == null ? null : new Match(best, bestD);
  }

  /** {@code edit_distance} of two strings. */
  static int editDistance(String a, String b, int bound) {
    return editDistance(a.codePoints().toArray(), b.codePoints().toArray(), bound);
  }

  /** Optimal string alignment distance of code point arrays; any value above {@code bound} is bound + 1. */
  static int editDistance(int[] a, int[] b, int bound) {
    if (Math.abs(a.length - b.length) > bound) {
      return bound + 1;
    }
    int[] prev2 = null;
    int[] prev = new int[b.length + 1];
    for (int j = 0; j <= b.length; j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length; i++) {
      int[] cur = new int[b.length + 1];
      cur[0] = i;
      int min = i;
      for (int j = 1; j <= b.length; j++) {
        int cost = a[i - 1] == b[j - 1] ? 0 : 1;
        int v = Math.min(Math.min(prev[j] + 1, cur[j - 1] + 1), prev[j - 1] + cost);
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
          v = Math.min(v, prev2[j - 2] + 1);
        }
        cur[j] = v;
        min = Math.min(min, v);
      }
      if (min > bound) {
        return bound + 1;
      }
      prev2 = prev;
      prev = cur;
    }
    return Math.min(prev[b.length], bound + 1);
  }
}
