package io.configwatch.detect;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Python's strict reading of one raw record, as {@code udfs.classify.parse_record} does it once the
 * bytes are known to be UTF-8 ({@link DecoderText#isUtf8}): JSON as {@code json.loads} reads it with its C
 * scanner: only
 * {@code " \t\n\r"} between tokens, no byte order mark, strings without raw control characters,
 * the escapes JSON names, {@code NaN}/{@code Infinity}/{@code -Infinity}, the last of duplicate
 * keys, ints of at most {@code sys.get_int_max_str_digits()} digits, nothing after the value, and
 * nesting no deeper than Python's recursion allows ({@code max_nesting}).
 *
 * <p>Values: {@link Map} (an object), {@link List}, {@link String}, {@link Long} (an int within
 * int64), {@link #BIG_INT} (an int outside it), {@link #FLOAT} (any float: the decoder needs its
 * type only), {@link Boolean}, {@code null}. {@link Reader#lone} tells whether an escape gave an
 * unpaired UTF-16 surrogate somewhere (a dropped duplicate's value included).
 */
final class DecoderJson {
  private DecoderJson() {}

  /** A value whose Python type is all the decoder needs. */
  record Marker(String pyType) {}

  /** A float ({@code 1.0}, {@code 1e0}, {@code NaN}, ...). */
  static final Marker FLOAT = new Marker("float");
  /** An int outside the int64 range. */
  static final Marker BIG_INT = new Marker("int");

  /** Why a record could not be read (no stack trace: bad records are common enough to be cheap). */
  static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;
    final boolean deep;

    private Failure(boolean deep) {
      super(deep ? "too deep" : "not JSON", null, false, false);
      this.deep = deep;
    }
  }

  static final Failure NOT_JSON = new Failure(false);
  static final Failure TOO_DEEP = new Failure(true);

  /** One read of one record's bytes (already known to be UTF-8). */
  static final class Reader {
    private final byte[] b;
    private final int n;
    private final int maxNesting;
    private final int maxIntDigits;
    private final DecoderText.Strings strings;
    private int pos;
    private int depth;
    private StringBuilder sb;
    /** Whether some escape gave an unpaired surrogate. */
    boolean lone;

    /** A reader of {@code b}; {@code strings} (or null) keeps short ASCII strings already made. */
    Reader(byte[] b, int maxNesting, int maxIntDigits, DecoderText.Strings strings) {
      this.strings = strings;
      this.b = b;
      this.n = b.length;
      this.maxNesting = maxNesting;
      this.maxIntDigits = maxIntDigits;
    }

    /** The document's value; NOT_JSON or TOO_DEEP when Python's json.loads would refuse it. */
    Object document() throws Failure {
      skipSpace();
      Object value = value();
      skipSpace();
      if (pos != n) {
        throw NOT_JSON;
      }
      return value;
    }

    private void skipSpace() {
      while (pos < n) {
        byte c = b[pos];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
          return;
        }
        pos++;
      }
    }

    private Object value() throws Failure {
      if (pos >= n) {
        throw NOT_JSON;
      }
      byte c = b[pos];
      switch (c) {
        case '"':
          pos++;
          return string();
        case '{':
          return object();
        case '[':
          return array();
        case 'n':
          word("null");
          return null;
        case 't':
          word("true");
          return Boolean.TRUE;
        case 'f':
          word("false");
          return Boolean.FALSE;
        case 'N':
          word("NaN");
          return FLOAT;
        case 'I':
          word("Infinity");
          return FLOAT;
        case '-':
          if (pos + 1 < n && b[pos + 1] == 'I') {
            pos++;
            word("Infinity");
            return FLOAT;
          }
          return number();
        default:
          return number();
      }
    }

    private void word(String w) throws Failure {
      int len = w.length();
      if (pos + len > n) {
        throw NOT_JSON;
      }
      for (int k = 0; k < len; k++) {
        if (b[pos + k] != w.charAt(k)) {
          throw NOT_JSON;
        }
      }
      pos += len;
    }

    private void enter() throws Failure {
      if (++depth > maxNesting) {
        throw TOO_DEEP;
      }
    }

    private Map<String, Object> object() throws Failure {
      enter();
      pos++;
      Map<String, Object> map = new HashMap<>();
      skipSpace();
      if (pos < n && b[pos] == '}') {
        pos++;
        depth--;
        return map;
      }
      while (true) {
        if (pos >= n || b[pos] != '"') {
          throw NOT_JSON;
        }
        pos++;
        String key = string();
        skipSpace();
        if (pos >= n || b[pos] != ':') {
          throw NOT_JSON;
        }
        pos++;
        skipSpace();
        map.put(key, value());
        skipSpace();
        if (pos >= n) {
          throw NOT_JSON;
        }
        byte c = b[pos++];
        if (c == '}') {
          depth--;
          return map;
        }
        if (c != ',') {
          throw NOT_JSON;
        }
        skipSpace();
      }
    }

    private List<Object> array() throws Failure {
      enter();
      pos++;
      List<Object> list = new ArrayList<>();
      skipSpace();
      if (pos < n && b[pos] == ']') {
        pos++;
        depth--;
        return list;
      }
      while (true) {
        list.add(value());
        skipSpace();
        if (pos >= n) {
          throw NOT_JSON;
        }
        byte c = b[pos++];
        if (c == ']') {
          depth--;
          return list;
        }
        if (c != ',') {
          throw NOT_JSON;
        }
        skipSpace();
      }
    }

    private static boolean digit(byte c) {
      return c >= '0' && c <= '9';
    }

    private Object number() throws Failure {
      int start = pos;
      boolean negative = b[pos] == '-';
      if (negative) {
        pos++;
      }
      int digitsStart = pos;
      if (pos < n && b[pos] == '0') {
        pos++;
      } else if (pos < n && b[pos] >= '1' && b[pos] <= '9') {
        pos++;
        while (pos < n && digit(b[pos])) {
          pos++;
        }
      } else {
        throw NOT_JSON;
      }
      int digits = pos - digitsStart;
      boolean isFloat = false;
      if (pos < n && b[pos] == '.') {
        // Python reads "1." as the int 1 then stops at '.', which nothing may follow: an error either way.
        if (pos + 1 >= n || !digit(b[pos + 1])) {
          throw NOT_JSON;
        }
        isFloat = true;
        pos += 2;
        while (pos < n && digit(b[pos])) {
          pos++;
        }
      }
      if (pos < n && (b[pos] == 'e' || b[pos] == 'E')) {
        pos++;
        if (pos < n && (b[pos] == '+' || b[pos] == '-')) {
          pos++;
        }
        if (pos >= n || !digit(b[pos])) {
          throw NOT_JSON;
        }
        while (pos < n && digit(b[pos])) {
          pos++;
        }
        isFloat = true;
      }
      if (isFloat) {
        return FLOAT;
      }
      if (maxIntDigits > 0 && digits > maxIntDigits) {
        throw NOT_JSON; // ValueError: "Exceeds the limit (4300 digits) for integer string conversion"
      }
      if (digits <= 18) {
        long v = 0;
        for (int k = digitsStart; k < pos; k++) {
          v = v * 10 + (b[k] - '0');
        }
        return negative ? -v : v;
      }
      if (digits > 19) {
        return BIG_INT;
      }
      String text = new String(b, start, pos - start, StandardCharsets.ISO_8859_1);
      try {
        return Long.parseLong(text);
      } catch (NumberFormatException e) {
        return BIG_INT;
      }
    }

    /** Four hex digits at {@code at}, or -1. */
    private int hex4(int at) {
      if (at + 4 > n) {
        return -1;
      }
      int v = 0;
      for (int k = 0; k < 4; k++) {
        int h = Character.digit(b[at + k], 16);
        if (h < 0) {
          return -1;
        }
        v = (v << 4) | h;
      }
      return v;
    }

    /** A string's text; {@code pos} is just past its opening quote. */
    private String string() throws Failure {
      int start = pos;
      boolean ascii = true;
      int hash = 0;
      while (true) {
        if (pos >= n) {
          throw NOT_JSON;
        }
        byte c = b[pos];
        if (c == '"') {
          int len = pos - start;
          String s = ascii && strings != null && len <= DecoderText.Strings.MAX_LENGTH
              ? strings.get(b, start, len, hash)
              : new String(b, start, len, ascii ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
          pos++;
          return s;
        }
        hash = 31 * hash + c;
        if (c == '\\') {
          return escaped(start);
        }
        if (c >= 0 && c < 0x20) {
          throw NOT_JSON; // strict: "Invalid control character"
        }
        if (c < 0) {
          ascii = false;
        }
        pos++;
      }
    }

    private String escaped(int start) throws Failure {
      StringBuilder out = sb == null ? (sb = new StringBuilder(64)) : sb;
      out.setLength(0);
      int run = start;
      while (true) {
        if (pos >= n) {
          throw NOT_JSON;
        }
        byte c = b[pos];
        if (c == '"') {
          out.append(new String(b, run, pos - run, StandardCharsets.UTF_8));
          pos++;
          return out.toString();
        }
        if (c >= 0 && c < 0x20) {
          throw NOT_JSON;
        }
        if (c != '\\') {
          pos++;
          continue;
        }
        out.append(new String(b, run, pos - run, StandardCharsets.UTF_8));
        if (pos + 1 >= n) {
          throw NOT_JSON;
        }
        byte e = b[pos + 1];
        pos += 2;
        switch (e) {
          case '"' -> out.append('"');
          case '\\' -> out.append('\\');
          case '/' -> out.append('/');
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> unicode(out);
          default -> throw NOT_JSON;
        }
        run = pos;
      }
    }

    /** A {@code \}{@code uXXXX} escape (pos at its digits), joined with a following low surrogate as Python does. */
    private void unicode(StringBuilder out) throws Failure {
      int c = hex4(pos);
      if (c < 0) {
        throw NOT_JSON;
      }
      pos += 4;
      if (Character.isHighSurrogate((char) c)) {
        if (pos + 1 < n && b[pos] == '\\' && b[pos + 1] == 'u') {
          int c2 = hex4(pos + 2);
          if (c2 < 0) {
            throw NOT_JSON;
          }
          if (Character.isLowSurrogate((char) c2)) {
            out.append((char) c).append((char) c2);
            pos += 6;
            return;
          }
        }
        lone = true;
      } else if (Character.isLowSurrogate((char) c)) {
        lone = true;
      }
      out.append((char) c);
    }
  }

}
