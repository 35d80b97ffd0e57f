package io.configwatch.detect;

import java.util.regex.Pattern;

/**
 * Config value text as {@code pd.to_numeric(..., errors="coerce")} reads it where the fleet rules
 * take a push's numbers ({@code udfs.rules.fleet.fleet_values}): ASCII whitespace around a decimal
 * or exponent number is allowed; anything else (hex, digit separators, other scripts' digits, words)
 * is not a number. Values that are not finite are dropped by the caller, as in Python.
 */
final class PandasNumbers {
  private static final Pattern NUMBER = Pattern.compile("[+-]?(?:[0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?");

  private PandasNumbers() {}

  /** The number in {@code text}, or NaN. */
  static double parse(String text) {
    if (text == null) {
      return Double.NaN;
    }
    int lo = 0;
    int hi = text.length();
    while (lo < hi && isSpace(text.charAt(lo))) {
      lo++;
    }
    while (hi > lo && isSpace(text.charAt(hi - 1))) {
      hi--;
    }
    String s = text.substring(lo, hi);
    if (!NUMBER.matcher(s).matches()) {
      return Double.NaN;
    }
    double value = Double.parseDouble(s);
    return Double.isInfinite(value) ? Double.NaN : value;
  }

  private static boolean isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\u000b' || c == '\f';
  }
}
