package io.configwatch.detect;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.Map;

/**
 * Python's text of numbers and messages as the stateful rules write them ({@code udfs.rules.fleet},
 * {@code udfs.rules.groups}): {@code str.format} of a message template, {@code str()} of ints and
 * floats, {@code round}, {@code format(x, ".nf")} (signed zero, {@code inf}, {@code nan} included), and
 * Python's {@code str.strip()} and {@code str.lower()}.
 */
final class FleetText {
  private FleetText() {}

  /** Python's {@code template.format(**values)} for fields {@code {name}} and {@code {name:.Nf}}. */
  static String format(String template, Map<String, Object> values) {
    StringBuilder out = new StringBuilder(template.length() + 64);
    int i = 0;
    while (i < template.length()) {
      char c = template.charAt(i);
      if ((c == '{' || c == '}') && i + 1 < template.length() && template.charAt(i + 1) == c) {
        out.append(c);
        i += 2;
      } else if (c == '{') {
        int end = template.indexOf('}', i);
        String field = template.substring(i + 1, end);
        int colon = field.indexOf(':');
        String name = colon < 0 ? field : field.substring(0, colon);
        if (!values.containsKey(name)) {
          throw new IllegalArgumentException("no value for {" + name + "} in a message template");
        }
        Object value = values.get(name);
        if (colon < 0) {
          out.append(str(value));
        } else {
          String spec = field.substring(colon + 1);
          if (!spec.startsWith(".") || !spec.endsWith("f")) {
            throw new IllegalArgumentException("unsupported format spec " + spec);
          }
          out.append(fixed(((Number) value).doubleValue(), Integer.parseInt(spec.substring(1, spec.length() - 1))));
        }
        i = end + 1;
      } else {
        out.append(c);
        i++;
      }
    }
    return out.toString();
  }

  /** Python's {@code str(value)}: ints, floats (repr; {@code inf}, {@code nan}), strings, big ints (Raw). */
  static String str(Object value) {
    if (value instanceof Double d) {
      return repr(d);
    }
    if (value instanceof PyJson.Raw raw) {
      return raw.json();
    }
    return value == null ? "None" : value.toString();
  }

  /** Python's {@code repr(float)}. */
  static String repr(double x) {
    if (Double.isNaN(x)) {
      return "nan";
    }
    if (Double.isInfinite(x)) {
      return x > 0 ? "inf" : "-inf";
    }
    return PyJson.floatRepr(x);
  }

  /** Python's {@code round(x, places)} of a float (half to even on the exact value; the sign of zero kept). */
  static double round(double x, int places) {
    if (Double.isNaN(x) || Double.isInfinite(x)) {
      return x;
    }
    double r = new BigDecimal(x).setScale(places, RoundingMode.HALF_EVEN).doubleValue();
    return r == 0 ? Math.copySign(0.0, x) : r;
  }

  /** Python's {@code format(x, ".<places>f")}. */
  static String fixed(double x, int places) {
    if (Double.isNaN(x) || Double.isInfinite(x)) {
      return repr(x);
    }
    String text = new BigDecimal(x).setScale(places, RoundingMode.HALF_EVEN).toPlainString();
    boolean negative = x < 0 || (x == 0 && 1 / x < 0);
    return negative && !text.startsWith("-") ? "-" + text : text;
  }

  /** {@code udfs.rules.fleet._shown}: a whole number as an int (Long, or Raw digits past long), else rounded. */
  static Object shown(double x, int places) {
    if (!Double.isNaN(x) && !Double.isInfinite(x) && x == Math.floor(x)) {
      if (x >= -0x1p63 && x < 0x1p63) {
        return (long) x;
      }
      return new PyJson.Raw(new BigDecimal(x).toBigInteger().toString());
    }
    return round(x, places);
  }

  /** Python's {@code str.isspace()} of one code point (Unicode White_Space plus the separators 0x1c..0x1f). */
  static boolean isSpace(int c) {
    return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680
        || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
  }

  /** Python's {@code str.strip()}. */
  static String strip(String s) {
    int start = 0;
    int end = s.length();
    while (start < end && isSpace(s.charAt(start))) {
      start++;
    }
    while (end > start && isSpace(s.charAt(end - 1))) {
      end--;
    }
    return s.substring(start, end);
  }

  /** Python's {@code str.lower()} (Java's root-locale lowering; the two agree but for Unicode-version differences). */
  static String lower(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c >= 0x80 || (c >= 'A' && c <= 'Z')) {
        return s.toLowerCase(Locale.ROOT);
      }
    }
    return s;
  }
}
