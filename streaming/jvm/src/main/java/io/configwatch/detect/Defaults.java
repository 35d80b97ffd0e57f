package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Release-dependent defaults and behaviours: the twin of {@code udfs.rules.defaults} ({@code version_tuple},
 * {@code band}, {@code defaults_at}, {@code behaviours_at}, {@code in_releases}) over {@code defaults.json}.
 * Versions are tuples of unbounded integers compared as Python compares tuples.
 */
final class Defaults implements Serializable {
  private static final long serialVersionUID = 1L;

  /** A parsed release: Python's {@code tuple[int, ...]}, ordered as Python orders tuples. */
  static final class Version implements Comparable<Version>, Serializable {
    private static final long serialVersionUID = 1L;
    private final BigInteger[] parts;

    Version(BigInteger[] parts) {
      this.parts = parts;
    }

    @Override
    public int compareTo(Version other) {
      int n = Math.min(parts.length, other.parts.length);
      for (int i = 0; i < n; i++) {
        int c = parts[i].compareTo(other.parts[i]);
        if (c != 0) {
          return c;
        }
      }
      return Integer.compare(parts.length, other.parts.length);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Version v && Arrays.equals(parts, v.parts);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(parts);
    }

    /** {@code ".".join(str(p) for p in version)}. */
    @Override
    public String toString() {
      StringBuilder out = new StringBuilder();
      for (int i = 0; i < parts.length; i++) {
        out.append(i == 0 ? "" : ".").append(parts[i]);
      }
      return out.toString();
    }
  }

  private record Since(Version since, String value) implements Serializable {}

  private record Behaviour(String name, List<Version[]> releases) implements Serializable {}

  private final Pattern release;
  /** family -> role -> key -> defaults in file order. */
  private final Map<String, Map<String, Map<String, List<Since>>>> keys = new HashMap<>();
  private final Map<String, List<Behaviour>> behaviours = new HashMap<>();
  private final Map<String, List<Version>> boundaries = new HashMap<>();

  Defaults(Knowledge knowledge) {
    release = pythonPattern(knowledge.section("keysets").get("release").asText());
    JsonNode families = knowledge.section("data").get("defaults.json").get("families");
    families.fields().forEachRemaining(fam -> {
      Map<String, Map<String, List<Since>>> roles = new LinkedHashMap<>();
      TreeSet<Version> bounds = new TreeSet<>();
      bounds.add(new Version(new BigInteger[] {BigInteger.ZERO}));
      fam.getValue().path("keys").fields().forEachRemaining(role -> {
        Map<String, List<Since>> byKey = new LinkedHashMap<>();
        role.getValue().fields().forEachRemaining(key -> {
          List<Since> rows = new ArrayList<>();
          for (JsonNode r : key.getValue()) {
            Version since = strict(r.get("from").asText());
            rows.add(new Since(since, r.get("value").isNull() ? null : r.get("value").asText()));
            bounds.add(since);
          }
          byKey.put(key.getKey(), rows);
        });
        roles.put(role.getKey(), byKey);
      });
      List<Behaviour> list = new ArrayList<>();
      fam.getValue().path("behaviours").fields().forEachRemaining(b -> {
        List<Version[]> ranges = new ArrayList<>();
        for (JsonNode range : b.getValue().get("releases")) {
          Version lo = strict(range.get(0).asText());
          Version hi = range.get(1).isNull() ? null : strict(range.get(1).asText());
          ranges.add(new Version[] {lo, hi});
          bounds.add(lo);
          if (hi != null) {
            bounds.add(hi);
          }
        }
        list.add(new Behaviour(b.getKey(), ranges));
      });
      keys.put(fam.getKey(), roles);
      behaviours.put(fam.getKey(), list);
      boundaries.put(fam.getKey(), new ArrayList<>(bounds));
    });
  }

  /** A Python {@code re} pattern whose classes are Unicode-aware ({@code \d} is any decimal digit, Nd). */
  static Pattern pythonPattern(String pattern) {
    return Pattern.compile(pattern, Pattern.UNICODE_CHARACTER_CLASS);
  }

  /** The dotted number {@code pattern} matches at the start of {@code text} (group 1), or null. */
  static Version leading(Pattern pattern, String text) {
    Matcher m = pattern.matcher(text);
    if (!m.lookingAt()) {
      return null;
    }
    String[] split = m.group(1).split("\\.", -1);
    BigInteger[] parts = new BigInteger[split.length];
    for (int i = 0; i < split.length; i++) {
      parts[i] = integer(split[i]);
    }
    return new Version(parts);
  }

  /** Python's {@code int()} of a run of decimal digits (any script). */
  private static BigInteger integer(String digits) {
    StringBuilder ascii = new StringBuilder(digits.length());
    digits.codePoints().forEach(cp -> ascii.append((char) ('0' + Character.digit(cp, 10))));
    String text = ascii.toString();
    return text.length() < 19 ? BigInteger.valueOf(Long.parseLong(text)) : new BigInteger(text);
  }

  /** {@code version_tuple}: the leading dotted number of a version ({@code v1.17.1} included), or null. */
  Version versionTuple(String version) {
    return leading(release, EffectiveText.pyStrip(version == null ? "" : version));
  }

  private Version strict(String text) {
    Version v = versionTuple(text);
    if (v == null) {
      throw new IllegalArgumentException("defaults.json: '" + text + "' is not a release");
    }
    return v;
  }

  /** {@code in_releases}: {@code version} lies in one of the ranges [from, until). */
  static boolean inReleases(Version version, List<Version[]> releases) {
    for (Version[] range : releases) {
      if (range[0].compareTo(version) <= 0 && (range[1] == null || version.compareTo(range[1]) < 0)) {
        return true;
      }
    }
    return false;
  }

  /** {@code band}: the first release of the band {@code version} falls in (unparseable: the newest band). */
  String band(String family, String version) {
    List<Version> bounds = boundaries.getOrDefault(family, List.of(new Version(new BigInteger[] {BigInteger.ZERO})));
    Version parsed = versionTuple(version);
    Version start = null;
    if (parsed == null) {
      start = bounds.get(bounds.size() - 1);
    } else {
      for (Version b : bounds) {
        if (b.compareTo(parsed) <= 0) {
          start = b;
        }
      }
      if (start == null) {
        throw new IllegalArgumentException("max() arg is an empty sequence: no band below " + version);
      }
    }
    return start.toString();
  }

  /** {@code defaults_at}: the recorded defaults of one role at a release, in the table's key order. */
  Map<String, String> defaultsAt(String family, String role, String releaseText) {
    Version at = strict(releaseText);
    Map<String, String> out = new LinkedHashMap<>();
    Map<String, List<Since>> byKey = keys.getOrDefault(family, Map.of()).getOrDefault(role, Map.of());
    for (Map.Entry<String, List<Since>> e : byKey.entrySet()) {
      Since current = null;
      for (Since d : e.getValue()) {
        if (d.since().compareTo(at) <= 0) {
          current = d;
        }
      }
      if (current != null) {
        out.put(e.getKey(), current.value());
      }
    }
    return out;
  }

  /** {@code behaviours_at}: the names of the family's behaviours in effect at a release. */
  Set<String> behavioursAt(String family, String releaseText) {
    Version at = strict(releaseText);
    Set<String> out = new LinkedHashSet<>();
    for (Behaviour b : behaviours.getOrDefault(family, List.of())) {
      if (inReleases(at, b.releases())) {
        out.add(b.name());
      }
    }
    return Collections.unmodifiableSet(out);
  }
}
