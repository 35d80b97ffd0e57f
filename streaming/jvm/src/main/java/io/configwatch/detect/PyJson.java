package io.configwatch.detect;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * JSON text exactly as Python's {@code json.dumps(obj, separators=(",", ":"), ensure_ascii=False)}
 * writes it, so the job's records are byte for byte those of the Python rules ({@code udfs.rules}).
 *
 * <p>Values: {@code null}, {@link Boolean}, {@link Long}/{@link Integer} (Python int), {@link Double}
 * (Python float, written as {@code repr(float)}), {@link String}, {@link Map} (string keys; sorted
 * in code point order when asked, as {@code sort_keys=True}), {@link Collection} and arrays.
 * {@link Raw} embeds text that already is JSON.
 */
public final class PyJson {
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private PyJson() {}

  /** JSON text that is written as it is (a record's already serialized part). */
  public record Raw(String json) {}

  /** {@code json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=sortKeys)}. */
  public static String dumps(Object value, boolean sortKeys) {
    StringBuilder out = new StringBuilder(64);
    write(out, value, sortKeys);
    return out.toString();
  }

  /** As {@link #dumps(Object, boolean)}, appended to {@code out}. */
  public static void write(StringBuilder out, Object value, boolean sortKeys) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String s) {
      string(out, s);
    } else if (value instanceof Boolean b) {
      out.append(b ? "true" : "false");
    } else if (value instanceof Long || value instanceof Integer || value instanceof Short) {
      out.append(((Number) value).longValue());
    } else if (value instanceof Double || value instanceof Float) {
      out.append(floatRepr(((Number) value).doubleValue()));
    } else if (value instanceof Raw raw) {
      out.append(raw.json());
    } else if (value instanceof Map<?, ?> map) {
      List<Map.Entry<?, ?>> entries = new ArrayList<>(map.entrySet());
      if (sortKeys) {
        entries.sort((a, b) -> compareCodePoints(String.valueOf(a.getKey()), String.valueOf(b.getKey())));
      }
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : entries) {
        if (!first) {
          out.append(',');
        }
        first = false;
        string(out, String.valueOf(e.getKey()));
        out.append(':');
        write(out, e.getValue(), sortKeys);
      }
      out.append('}');
    } else if (value instanceof Collection<?> items) {
      out.append('[');
      boolean first = true;
      for (Object item : items) {
        if (!first) {
          out.append(',');
        }
        first = false;
        write(out, item, sortKeys);
      }
      out.append(']');
    } else if (value instanceof Object[] items) {
      write(out, List.of(items), sortKeys);
    } else {
      throw new IllegalArgumentException("no JSON form for a " + value.getClass().getName());
    }
  }

  /** A JSON string literal as Python writes it with {@code ensure_ascii=False}. */
  public static void string(StringBuilder out, String s) {
    string(out, s, false);
  }

  /** A JSON string literal as {@code json.dumps} writes it; {@code ensureAscii} escapes all but printable ASCII. */
  static void string(StringBuilder out, String s, boolean ensureAscii) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20 || (ensureAscii && c > 0x7e)) {
            out.append("\\u").append(HEX[c >> 12]).append(HEX[(c >> 8) & 15]).append(HEX[(c >> 4) & 15])
                .append(HEX[c & 15]);
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /** Python's ordering of str: by code point (Java's compareTo orders UTF-16 units). */
  public static int compareCodePoints(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      int ca = a.codePointAt(i);
      int cb = b.codePointAt(j);
      if (ca != cb) {
        return Integer.compare(ca, cb);
      }
      i += Character.charCount(ca);
      j += Character.charCount(cb);
    }
    return Integer.compare(a.length() - i, b.length() - j);
  }

  /** Python's {@code repr(x)} of a float: the shortest digits that read back as {@code x}. */
  public static String floatRepr(double x) {
    if (Double.isNaN(x)) {
      return "NaN";
    }
    if (Double.isInfinite(x)) {
      return x > 0 ? "Infinity" : "-Infinity";
    }
    if (x == 0) {
      return (1 / x < 0) ? "-0.0" : "0.0";
    }
    BigDecimal exact = new BigDecimal(x);
    BigDecimal shortest = exact;
    for (int p = 1; p <= 17; p++) {
      BigDecimal candidate = exact.round(new MathContext(p, RoundingMode.HALF_EVEN));
      if (candidate.doubleValue() == x) {
        shortest = candidate;
        break;
      }
    }
    String digits = shortest.unscaledValue().abs().toString();
    // strip trailing zeros of the digit string (the scale moves with them)
    int end = digits.length();
    while (end > 1 && digits.charAt(end - 1) == '0') {
      end--;
    }
    int exponent = digits.length() - 1 - shortest.scale(); // decimal exponent of the first digit
    digits = digits.substring(0, end);
    StringBuilder out = new StringBuilder(24);
    if (x < 0) {
      out.append('-');
    }
    if (exponent < -4 || exponent >= 16) {
      out.append(digits.charAt(0));
      if (digits.length() > 1) {
        out.append('.').append(digits, 1, digits.length());
      }
      out.append('e').append(exponent < 0 ? '-' : '+');
      int abs = Math.abs(exponent);
      if (abs < 10) {
        out.append('0');
      }
      out.append(abs);
    } else if (exponent < 0) {
      out.append("0.");
      out.append("0".repeat(-exponent - 1));
      out.append(digits);
    } else if (digits.length() <= exponent + 1) {
      out.append(digits);
      out.append("0".repeat(exponent + 1 - digits.length()));
      out.append(".0");
    } else {
      out.append(digits, 0, exponent + 1).append('.').append(digits, exponent + 1, digits.length());
    }
    return out.toString();
  }

  /** Python's {@code round(x, places)}: the exact binary value rounded half to even. */
  public static double round(double x, int places) {
    if (Double.isNaN(x) || Double.isInfinite(x)) {
      return x;
    }
    return new BigDecimal(x).setScale(places, RoundingMode.HALF_EVEN).doubleValue();
  }

  /** Python's {@code format(x, ".<places>f")}. */
  public static String fixed(double x, int places) {
    return new BigDecimal(x).setScale(places, RoundingMode.HALF_EVEN).toPlainString();
  }

  /** Python's {@code float(format(x, ".<digits>g"))}: {@code x} rounded to significant digits. */
  public static double significant(double x, int digits) {
    if (x == 0 || Double.isNaN(x) || Double.isInfinite(x)) {
      return x;
    }
    return new BigDecimal(x).round(new MathContext(digits, RoundingMode.HALF_EVEN)).doubleValue();
  }
}
