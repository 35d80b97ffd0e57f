package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How an anomaly finding shows a value ({@code udfs.rules.anomalies._shown}, {@code _text}, {@code _fill}):
 * whole numbers as ints (a Long, or the exact digits where a Long cannot hold them), acks -1 as its
 * word, free text only as "set" unless it is a known enum word, unknown as null; messages fill each
 * placeholder with the value as Python's {@code str()} writes it.
 */
final class AnomaliesShown implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final double LONG_LIMIT = 0x1p63;

  private final Map<String, Set<String>> enums = new HashMap<>();
  private final String shownSet;
  private final String shownAcksAll;
  private final Pattern placeholder;

  AnomaliesShown(Knowledge knowledge) {
    JsonNode section = knowledge.section("anomalies");
    section.get("enums").fields().forEachRemaining(e -> enums.put(e.getKey(),
        new HashSet<>(Knowledge.strings(e.getValue()))));
    shownSet = section.get("shown_set").asText();
    shownAcksAll = section.get("shown_acks_all").asText();
    placeholder = Pattern.compile(section.get("placeholder").asText());
  }

  /** {@code _shown(value, key)}: value a Double, Boolean, String or null. */
  Object shown(Object value, String key, boolean stringKey) {
    if (value == null || (value instanceof Double d && d.isNaN())) {
      return null;
    }
    if (stringKey) {
      String text = EffectiveText.pyLower(EffectiveText.pyStrip(String.valueOf(value)));
      return enums.getOrDefault(key, Set.of()).contains(text) ? text : shownSet;
    }
    if (value instanceof Double d && !d.isInfinite() && d == Math.rint(d)) {
      if (key.equals("acks") && d == -1) {
        return shownAcksAll;
      }
      return -LONG_LIMIT <= d && d < LONG_LIMIT ? (Object) (long) (double) d
          : new PyJson.Raw(new BigDecimal(d).toBigInteger().toString());
    }
    return value;
  }

  /** Python's {@code str()} of a shown value ({@code _text}). */
  static String text(Object value) {
    if (value == null) {
      return "None";
    }
    if (value instanceof Boolean b) {
      return b ? "true" : "false";
    }
    if (value instanceof Double d) {
      return d.isInfinite() ? (d > 0 ? "inf" : "-inf") : PyJson.floatRepr(d);
    }
    if (value instanceof PyJson.Raw raw) {
      return raw.json();
    }
    return String.valueOf(value);
  }

  /** {@code _fill}: each {@code {key}} of the template replaced by its shown value's text. */
  String fill(String template, Map<String, Object> shown) {
    Matcher m = placeholder.matcher(template);
    StringBuilder out = new StringBuilder(template.length() + 32);
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(text(shown.get(m.group(1)))));
    }
    m.appendTail(out);
    return out.toString();
  }
}
