package io.configwatch.detect;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One RE2 pattern of the Python rules, run in the JVM with the results {@code pyarrow.compute} gives.
 * A short text goes to {@code java.util.regex} (its translation, {@link SecretScanRe2}: fast on the
 * values clients send); a long one to RE2J (Hadoop's shaded copy of Google's Java port of RE2, which
 * reads RE2 syntax as it is), since a backtracking engine can take time quadratic in a long run of
 * characters where RE2 takes linear time. Both give RE2's leftmost-first match and its groups.
 */
final class SecretScanRegex implements Serializable {
  private static final long serialVersionUID = 1L;
  /** Texts longer than this (UTF-16 units) go to RE2J. */
  static final int LONG_TEXT = 512;

  private final String re2;
  private final Pattern jdk;
  private final int longText;
  private transient org.apache.hadoop.shaded.com.google.re2j.Pattern linear;

  /** {@code re2} with the default split between the engines; {@code longText} sets it (tests: 0, MAX_VALUE). */
  SecretScanRegex(String re2, int longText) {
    this.re2 = re2;
    this.jdk = SecretScanRe2.compile(re2);
    this.longText = longText;
  }

  /** The first (leftmost-first) match in a text: its bounds and groups, numbered as RE2 numbers them. */
  interface Match {
    int start();

    int end();

    /** The group's text; null when it took no part in the match. */
    String group(int group);

    boolean next();
  }

  /** {@code match_substring_regex}: whether the pattern matches anywhere in {@code text}. */
  boolean found(String text) {
    return first(text) != null;
  }

  /** The first match in {@code text}, or null; {@link Match#next} moves on to the next one. */
  Match first(String text) {
    Match m = text.length() > longText ? linear(text) : jdk(text);
    return m.next() ? m : null;
  }

  private Match jdk(String text) {
    Matcher m = jdk.matcher(text);
    return new Match() {
      @Override
      public int start() {
        return m.start();
      }

      @Override
      public int end() {
        return m.end();
      }

      @Override
      public String group(int group) {
        return m.group(group);
      }

      @Override
      public boolean next() {
        return m.find();
      }
    };
  }

  private Match linear(String text) {
    if (linear == null) {
      linear = org.apache.hadoop.shaded.com.google.re2j.Pattern.compile(re2);
    }
    org.apache.hadoop.shaded.com.google.re2j.Matcher m = linear.matcher(text);
    return new Match() {
      @Override
      public int start() {
        return m.start();
      }

      @Override
      public int end() {
        return m.end();
      }

      @Override
      public String group(int group) {
        return m.start(group) < 0 ? null : m.group(group);
      }

      @Override
      public boolean next() {
        return m.find();
      }
    };
  }

  /** {@code pc.replace_substring_regex}: every non-overlapping match, leftmost first, replaced by the rewrite. */
  String replaceAll(String text, SecretScanRe2.Rewrite rewrite) {
    Match m = first(text);
    if (m == null) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length() + 16);
    int last = 0;
    do {
      nonEmpty(m);
      out.append(text, last, m.start());
      for (Object part : rewrite.parts()) {
        if (part instanceof Integer g) {
          String group = m.group(g);
          out.append(group == null ? "" : group);
        } else {
          out.append((String) part);
        }
      }
      last = m.end();
    } while (m.next());
    return out.append(text, last, text.length()).toString();
  }

  /** {@code pc.split_pattern_regex} (the pattern never matches empty): the pieces between the matches. */
  List<String> split(String text) {
    List<String> pieces = new ArrayList<>();
    int last = 0;
    for (Match m = first(text); m != null; m = m.next() ? m : null) {
      nonEmpty(m);
      pieces.add(text.substring(last, m.start()));
      last = m.end();
    }
    pieces.add(text.substring(last));
    return pieces;
  }

  private void nonEmpty(Match m) {
    if (m.end() == m.start()) {
      throw new IllegalArgumentException("an empty match is not translated: " + re2);
    }
  }

  /** The number RE2 gives the capturing group {@code (?P<name>...)}; IllegalArgumentException if none. */
  int group(String name) {
    return SecretScanRe2.groupNumber(re2, name);
  }
}
