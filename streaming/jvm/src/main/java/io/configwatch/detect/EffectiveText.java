package io.configwatch.detect;

import java.util.Locale;

/**
 * The string functions the effective values are read with: Python's {@code str.strip()} and
 * {@code str.lower()} (pandas' {@code .str.strip().str.lower()}), and pyarrow's
 * {@code utf8_trim_whitespace} and {@code utf8_lower}. Python's white space ({@code str.isspace}:
 * category Zs or bidirectional class WS, B or S) is the same set of code points Arrow trims;
 * Arrow lower-cases code point by code point (simple case mapping), Python with the full mapping.
 */
final class EffectiveText {
  private EffectiveText() {}

  /** {@code str.isspace()} of one code point (and Arrow's white space). */
  static boolean isSpace(int cp) {
    if (cp < 0x80) {
      return cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f);
    }
    if (Character.getType(cp) == Character.SPACE_SEPARATOR) {
      return true;
    }
    byte bidi = Character.getDirectionality(cp);
    return bidi == Character.DIRECTIONALITY_WHITESPACE || bidi == Character.DIRECTIONALITY_PARAGRAPH_SEPARATOR
        || bidi == Character.DIRECTIONALITY_SEGMENT_SEPARATOR;
  }

  /** {@code str.strip()} (and {@code utf8_trim_whitespace}). */
  static String pyStrip(String s) {
    int start = 0;
    int end = s.length();
    while (start < end && isSpace(s.codePointAt(start))) {
      start += Character.charCount(s.codePointAt(start));
    }
    while (end > start && isSpace(s.codePointBefore(end))) {
      end -= Character.charCount(s.codePointBefore(end));
    }
    return start == 0 && end == s.length() ? s : s.substring(start, end);
  }

  /** {@code str.lower()}. */
  static String pyLower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }

  /** {@code utf8_lower}: each code point's simple lower-case mapping. */
  static String arrowLower(String s) {
    boolean ascii = true;
    for (int i = 0; i < s.length() && ascii; i++) {
      char c = s.charAt(i);
      ascii = c < 0x80 && (c < 'A' || c > 'Z');
    }
    if (ascii) {
      return s;
    }
    StringBuilder out = new StringBuilder(s.length());
    s.codePoints().forEach(cp -> out.appendCodePoint(Character.toLowerCase(cp)));
    return out.toString();
  }
}
