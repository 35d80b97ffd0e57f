package io.configwatch.detect;

import java.util.Locale;
import java.util.Map;

/**
 * Python's Unicode string semantics that {@code udfs.sensitivity} relies on, in Java: the general
 * category names of {@code unicodedata.category}, {@code str.strip()} (white space: category Zs or
 * bidirectional class WS, B or S, as {@code str.isspace} defines it) and {@code str.lower()} (full
 * case mapping with the final-sigma rule, as {@code String.toLowerCase(Locale.ROOT)} does). Python 3.11
 * reads Unicode 14.0, Java 17 Unicode 13.0: code points assigned in 14.0 may be judged differently.
 */
final class SensitivityUnicode {
  private SensitivityUnicode() {}

  private static final Map<String, Integer> TYPES = Map.ofEntries(
      Map.entry("Lu", (int) Character.UPPERCASE_LETTER), Map.entry("Ll", (int) Character.LOWERCASE_LETTER),
      Map.entry("Lt", (int) Character.TITLECASE_LETTER), Map.entry("Lm", (int) Character.MODIFIER_LETTER),
      Map.entry("Lo", (int) Character.OTHER_LETTER), Map.entry("Mn", (int) Character.NON_SPACING_MARK),
      Map.entry("Mc", (int) Character.COMBINING_SPACING_MARK), Map.entry("Me", (int) Character.ENCLOSING_MARK),
      Map.entry("Nd", (int) Character.DECIMAL_DIGIT_NUMBER), Map.entry("Nl", (int) Character.LETTER_NUMBER),
      Map.entry("No", (int) Character.OTHER_NUMBER), Map.entry("Pc", (int) Character.CONNECTOR_PUNCTUATION),
      Map.entry("Pd", (int) Character.DASH_PUNCTUATION), Map.entry("Ps", (int) Character.START_PUNCTUATION),
      Map.entry("Pe", (int) Character.END_PUNCTUATION), Map.entry("Pi", (int) Character.INITIAL_QUOTE_PUNCTUATION),
      Map.entry("Pf", (int) Character.FINAL_QUOTE_PUNCTUATION), Map.entry("Po", (int) Character.OTHER_PUNCTUATION),
      Map.entry("Sm", (int) Character.MATH_SYMBOL), Map.entry("Sc", (int) Character.CURRENCY_SYMBOL),
      Map.entry("Sk", (int) Character.MODIFIER_SYMBOL), Map.entry("So", (int) Character.OTHER_SYMBOL),
      Map.entry("Zs", (int) Character.SPACE_SEPARATOR), Map.entry("Zl", (int) Character.LINE_SEPARATOR),
      Map.entry("Zp", (int) Character.PARAGRAPH_SEPARATOR), Map.entry("Cc", (int) Character.CONTROL),
      Map.entry("Cf", (int) Character.FORMAT), Map.entry("Cs", (int) Character.SURROGATE),
      Map.entry("Co", (int) Character.PRIVATE_USE), Map.entry("Cn", (int) Character.UNASSIGNED));

  /** {@code Character.getType}'s value for a {@code unicodedata.category} name. */
  static int javaType(String category) {
    Integer type = TYPES.get(category);
    if (type == null) {
      throw new IllegalArgumentException("no Unicode general category " + category);
    }
    return type;
  }

  /** {@code unicodedata.category} of one code point, by Java's tables. */
  static String category(int cp) {
    int type = Character.getType(cp);
    return TYPES.entrySet().stream().filter(e -> e.getValue() == type).map(Map.Entry::getKey).findFirst()
        .orElseThrow();
  }

  /**
   * {@code str.lower()}: each code point's lower case (U+0130 becomes {@code i} and a combining dot, as
   * in Java), a capital sigma its final form where Python's Final_Sigma context holds (a cased letter
   * before it and none after it, case-ignorable ones skipped; Java looks at the whole word instead).
   */
  static String lower(String s) {
    if (s.indexOf(CAPITAL_SIGMA) < 0) {
      return s.toLowerCase(Locale.ROOT);
    }
    StringBuilder out = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      if (cp == CAPITAL_SIGMA) {
        out.append(finalSigma(s, i) ? '\u03c2' : '\u03c3');
      } else {
        out.append(new String(Character.toChars(cp)).toLowerCase(Locale.ROOT));
      }
      i += Character.charCount(cp);
    }
    return out.toString();
  }

  private static final char CAPITAL_SIGMA = '\u03a3';
  /** Word_Break MidLetter, MidNumLet and Single_Quote: case-ignorable whatever their category. */
  private static final String MID_WORD = ":\u00b7\u0387\u055f\u05f4\u2027\ufe13\ufe55\uff1a"
      + ".\u2018\u2019\u2024\ufe52\uff07\uff0e'";

  private static boolean finalSigma(String s, int at) {
    int before = at;
    int c = -1;
    while (before > 0) {
      c = s.codePointBefore(before);
      if (!caseIgnorable(c)) {
        break;
      }
      before -= Character.charCount(c);
      c = -1;
    }
    if (c < 0 || !cased(c)) {
      return false;
    }
    for (int after = at + 1; after < s.length(); ) {
      int d = s.codePointAt(after);
      if (!caseIgnorable(d)) {
        return !cased(d);
      }
      after += Character.charCount(d);
    }
    return true;
  }

  /** Unicode's Cased: lower case, upper case (Other_Lowercase/Other_Uppercase included) or title case. */
  private static boolean cased(int cp) {
    return Character.isLowerCase(cp) || Character.isUpperCase(cp) || Character.isTitleCase(cp);
  }

  /** Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk, or a mid-word punctuation mark. */
  private static boolean caseIgnorable(int cp) {
    int type = Character.getType(cp);
    return type == Character.NON_SPACING_MARK || type == Character.ENCLOSING_MARK || type == Character.FORMAT
        || type == Character.MODIFIER_LETTER || type == Character.MODIFIER_SYMBOL
        || cp < 0x10000 && MID_WORD.indexOf(cp) >= 0;
  }
}
