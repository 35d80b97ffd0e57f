package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Go {@code time.Duration} text read as milliseconds: the twin of {@code udfs.rules.durations.go_duration_ms}
 * (an optional sign, then numbers each with a unit, or a bare {@code 0}; anything else is unknown, NaN).
 * The patterns are Python {@code re} ones with ASCII classes only, which Java reads alike; a full match
 * is {@link Matcher#matches()}. Cached per distinct text. Not thread-safe.
 */
final class GoDurations implements Serializable {
  private static final long serialVersionUID = 1L;

  private final Pattern duration;
  private final Pattern component;
  private final Map<String, Double> msPerUnit = new HashMap<>();
  private transient Map<String, Double> cache;

  GoDurations(Knowledge knowledge) {
    JsonNode section = knowledge.section("durations");
    duration = Pattern.compile(section.get("go_duration").asText());
    component = Pattern.compile(section.get("component").asText());
    section.get("ms_per_unit").fields().forEachRemaining(u -> msPerUnit.put(u.getKey(), u.getValue().asDouble()));
  }

  /** Milliseconds of a Go duration text ({@code 1m30s}: 90000.0), NaN when it is none (or null). */
  double ms(String text) {
    if (text == null) {
      return Double.NaN;
    }
    if (cache == null) {
      cache = KeySets.lru(4096);
    }
    Double out = cache.get(text);
    if (out == null) {
      out = parse(text);
      cache.put(text, out);
    }
    return out;
  }

  private double parse(String raw) {
    String text = EffectiveText.pyStrip(raw);
    if (!duration.matcher(text).matches()) {
      return Double.NaN;
    }
    double sign = text.startsWith("-") ? -1.0 : 1.0;
    double total = 0;
    Matcher m = component.matcher(text);
    while (m.find()) {
      total += Double.parseDouble(m.group(1)) * msPerUnit.get(m.group(2));
    }
    return sign * total;
  }
}
