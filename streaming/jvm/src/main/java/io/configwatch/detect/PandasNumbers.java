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
    double whole = whole(text, lo, hi);
    if (!Double.isNaN(whole)) {
      return whole;
    }
    String s = text.substring(lo, hi);
    if (!NUMBER.matcher(s).matches()) {
      return Double.NaN;
    }
    double value = Double.parseDouble(s);
    return Double.isInfinite(value) ? Double.NaN : value;
  }

  /**
   * The common case without a pattern: a sign and 1-15 ASCII digits, exact as a double and the same value
   * {@code Double.parseDouble} gives (a minus zero included); NaN for any other text, which the pattern then reads.
   */
  private static double whole(String text, int lo, int hi) {
    boolean negative = lo < hi && text.charAt(lo) == '-';
    int from = lo < hi && (negative || text.charAt(lo) == '+') ? lo + 1 : lo;
    if (from >= hi || hi - from > 15) {
      return Double.NaN;
    }
    long value = 0;
    for (int i = from; i < hi; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return Double.NaN;
      }
      value = value * 10 + (c - '0');
    }
    return negative ? -(double) value : (double) value;
  }

  private static boolean isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\u000b' || c == '\f';
  }
}
