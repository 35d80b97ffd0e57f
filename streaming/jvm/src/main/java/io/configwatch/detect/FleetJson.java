package io.configwatch.detect;

import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.Collection;
import java.util.Map;

/**
 * The stateful rules' state text as Python's {@code json.dumps(obj, separators=(",", ":"))} writes
 * it (ensure_ascii: every character outside {@code ' '..'~'} as a lower-case {@code \\uXXXX} escape,
 * UTF-16 unit by unit; NaN and infinities as {@code NaN}, {@code Infinity}), and read back as
 * {@code json.loads} reads it (non-numeric numbers allowed). The twin of the JSON calls of
 * {@code udfs.rules.fleet} and {@code udfs.rules.groups}; findings use {@link PyJson}.
 */
final class FleetJson {
  private static final JsonMapper MAPPER = JsonMapper.builder()
      .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

  private FleetJson() {}

  /** The parsed state text (a JSON object); IllegalArgumentException when it is not JSON. */
  static JsonNode parse(String text) {
    try {
      return MAPPER.readTree(text);
    } catch (IOException e) {
      throw new IllegalArgumentException("state is not JSON: " + e.getMessage(), e);
    }
  }

  /** A parsed scalar as Python holds it: null, String, Long (int), Double (float), Boolean. */
  static Object scalar(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (node.isTextual()) {
      return node.textValue();
    }
    if (node.isIntegralNumber()) {
      return node.canConvertToLong() ? (Object) node.longValue() : node.bigIntegerValue();
    }
    if (node.isNumber()) {
      return node.doubleValue();
    }
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    throw new IllegalArgumentException("not a JSON scalar: " + node);
  }

  /** {@code value} as ensure_ascii JSON: null, String, Long/Integer/BigInteger, Double, Boolean, List, Map. */
  static void write(StringBuilder out, Object value) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String s) {
      string(out, s);
    } else if (value instanceof Double d) {
      out.append(PyJson.floatRepr(d));
    } else if (value instanceof Number n) {
      out.append(n instanceof BigDecimal b ? b.toPlainString() : n.toString());
    } else if (value instanceof Boolean b) {
      out.append(b ? "true" : "false");
    } else if (value instanceof Collection<?> items) {
      out.append('[');
      boolean first = true;
      for (Object item : items) {
        if (!first) {
          out.append(',');
        }
        first = false;
        write(out, item);
      }
      out.append(']');
    } else if (value instanceof Map<?, ?> map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        string(out, String.valueOf(e.getKey()));
        out.append(':');
        write(out, e.getValue());
      }
      out.append('}');
    } else {
      throw new IllegalArgumentException("no JSON form for a " + value.getClass().getName());
    }
  }

  /** A JSON string literal as {@code json.dumps} writes it with ensure_ascii. */
  static void string(StringBuilder out, String s) {
    PyJson.string(out, s, true);
  }
}
