package io.configwatch.detect;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.regex.Pattern;

/**
 * RE2 patterns, as {@code pyarrow.compute} runs them (UTF-8 mode, Perl classes, not multi-line), turned
 * into {@code java.util.regex} patterns that match the same text the same way. What differs and is
 * translated: {@code \s} is {@code [\t\n\f\r ]} (no {@code \x0B}); {@code .} is anything but
 * {@code \n}; {@code $} is the end of the text only; {@code (?P<name>} names a group; {@code (?i)}
 * folds case by Unicode simple case folding, so a letter becomes the class of its fold orbit (only
 * {@code k} and {@code s} have members outside ASCII: KELVIN SIGN and LONG S; Java's own
 * {@code UNICODE_CASE} would also take the dotted and dotless i); inside a class {@code [} and
 * {@code &} are literals. Constructs these patterns do not use fail loudly instead of guessing.
 */
final class SecretScanRe2 {
  private SecretScanRe2() {}

  private static final String SPACE = "\\t\\n\\f\\r ";
  private static final String DIGIT = "0-9";
  private static final String WORD = "0-9A-Za-z_";

  /** The Java pattern that matches what RE2 matches with {@code re2}. */
  static Pattern compile(String re2) {
    return Pattern.compile(translate(re2));
  }

  /** {@code re2} in {@code java.util.regex} syntax; IllegalArgumentException for what it does not support. */
  static String translate(String re2) {
    StringBuilder out = new StringBuilder(re2.length() * 2);
    Deque<Boolean> scopes = new ArrayDeque<>();  // the case-folding flag outside each open group
    boolean fold = false;
    int i = 0;
    int n = re2.length();
    while (i < n) {
      char c = re2.charAt(i);
      if (c == '\\') {
        i = escape(re2, i, out, false);
      } else if (c == '[') {
        i = charClass(re2, i, out, fold);
      } else if (c == '(') {
        if (re2.startsWith("(?P<", i)) {
          int close = re2.indexOf('>', i);
          if (close < 0) {
            throw unsupported(re2, i);
          }
          out.append("(?<").append(re2, i + 4, close + 1);  // the name as it is, folded or not
          i = close + 1;
        } else if (re2.startsWith("(?:", i)) {
          out.append("(?:");
          i += 3;
        } else if (re2.startsWith("(?i:", i)) {
          out.append("(?:");
          scopes.push(fold);
          fold = true;
          i += 4;
          continue;
        } else if (re2.startsWith("(?i)", i)) {
          fold = true;  // to the end of the enclosing group
          i += 4;
          continue;
        } else if (re2.startsWith("(?", i)) {
          throw unsupported(re2, i);
        } else {
          out.append('(');
          i += 1;
        }
        scopes.push(fold);
      } else if (c == ')') {
        if (scopes.isEmpty()) {
          throw unsupported(re2, i);
        }
        fold = scopes.pop();
        out.append(')');
        i += 1;
      } else if (c == '.') {
        out.append("[^\\n]");
        i += 1;
      } else if (c == '$') {
        out.append("\\z");
        i += 1;
      } else if (fold && isAsciiLetter(c)) {
        out.append('[').append(orbit(c)).append(']');
        i += 1;
      } else {
        out.appendCodePoint(re2.codePointAt(i));
        i += Character.charCount(re2.codePointAt(i));
      }
    }
    return out.toString();
  }

  /** One escape at {@code re2[i]}, written to {@code out} (inside a class: {@code inClass}); the next index. */
  private static int escape(String re2, int i, StringBuilder out, boolean inClass) {
    if (i + 1 >= re2.length()) {
      throw unsupported(re2, i);
    }
    char e = re2.charAt(i + 1);
    String set = switch (e) {
      case 's' -> SPACE;
      case 'd' -> DIGIT;
      case 'w' -> WORD;
      default -> null;
    };
    if (set != null) {
      out.append(inClass ? set : "[" + set + "]");
    } else if (!inClass && (e == 'S' || e == 'D' || e == 'W')) {
      out.append("[^").append(e == 'S' ? SPACE : e == 'D' ? DIGIT : WORD).append(']');
    } else if (e == 'n' || e == 't' || e == 'r' || e == 'f') {
      out.append('\\').append(e);
    } else if (e == 'v') {
      out.append("\\x0B");
    } else if (!inClass && (e == 'A' || e == 'z')) {
      out.append('\\').append(e);
    } else if (e < 128 && !Character.isLetterOrDigit(e)) {
      out.append('\\').append(e);  // an escaped punctuation character is itself in both dialects
    } else {
      throw unsupported(re2, i);
    }
    return i + 2;
  }

  /** The class opening at {@code re2[i]}, written to {@code out}; the index after its closing bracket. */
  private static int charClass(String re2, int i, StringBuilder out, boolean fold) {
    out.append('[');
    i += 1;
    if (i < re2.length() && re2.charAt(i) == '^') {
      out.append('^');
      i += 1;
    }
    boolean first = true;
    while (i < re2.length()) {
      char c = re2.charAt(i);
      if (c == ']' && !first) {
        out.append(']');
        return i + 1;
      }
      first = false;
      if (c == '\\') {
        i = escape(re2, i, out, true);
        continue;
      }
      if (c == '[' && re2.startsWith("[:", i)) {
        throw unsupported(re2, i);  // a POSIX class
      }
      if (fold && isAsciiLetter(c)) {
        throw unsupported(re2, i);  // a folded class: not needed so far
      }
      if (c == '[' || c == '&' || c == ']') {
        out.append('\\').append(c);
        i += 1;
      } else {
        out.appendCodePoint(re2.codePointAt(i));
        i += Character.charCount(re2.codePointAt(i));
      }
    }
    throw unsupported(re2, i);
  }

  private static boolean isAsciiLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  /** The members of an ASCII letter's Unicode simple case-folding orbit, as RE2 folds them. */
  private static String orbit(char c) {
    char lower = Character.toLowerCase(c);
    String pair = "" + lower + Character.toUpperCase(c);
    return switch (lower) {
      case 'k' -> pair + "\\x{212A}";
      case 's' -> pair + "\\x{17F}";
      default -> pair;
    };
  }

  private static IllegalArgumentException unsupported(String re2, int at) {
    return new IllegalArgumentException("RE2 construct not translated at " + at + ": " + re2);
  }

  /** A rewrite string of RE2 ({@code \1} a group, {@code \\} a backslash), as literal and group parts. */
  record Rewrite(List<Object> parts) implements java.io.Serializable {
    static Rewrite parse(String rewrite) {
      List<Object> parts = new ArrayList<>();
      StringBuilder literal = new StringBuilder();
      for (int i = 0; i < rewrite.length(); i++) {
        char c = rewrite.charAt(i);
        if (c == '\\' && i + 1 < rewrite.length()) {
          char next = rewrite.charAt(++i);
          if (next >= '0' && next <= '9') {
            if (literal.length() > 0) {
              parts.add(literal.toString());
              literal.setLength(0);
            }
            parts.add(next - '0');
            continue;
          }
          if (next != '\\') {
            throw new IllegalArgumentException("RE2 rewrite not translated: " + rewrite);
          }
          literal.append('\\');
        } else {
          literal.append(c);
        }
      }
      if (literal.length() > 0) {
        parts.add(literal.toString());
      }
      return new Rewrite(List.copyOf(parts));
    }
  }

  /** The number RE2 gives the capturing group {@code (?P<name>...)} of {@code re2} (groups count from 1). */
  static int groupNumber(String re2, String name) {
    int number = 0;
    int classBody = -1;  // inside a class: where its members start (a "]" there is a member)
    for (int i = 0; i < re2.length(); i++) {
      char c = re2.charAt(i);
      if (c == '\\') {
        i++;
      } else if (classBody >= 0) {
        if (c == ']' && i > classBody) {
          classBody = -1;
        }
      } else if (c == '[') {
        classBody = re2.startsWith("[^", i) ? i + 2 : i + 1;
      } else if (c == '(' && (!re2.startsWith("(?", i) || re2.startsWith("(?P<", i))) {
        number++;
        if (re2.startsWith("(?P<" + name + ">", i)) {
          return number;
        }
      }
    }
    throw new IllegalArgumentException("no group " + name + " in " + re2);
  }
}
