package io.configwatch.detect;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * The text checks around {@link DecoderJson}'s reading in {@code udfs.classify.parse_record}: the
 * strict UTF-8 of {@code bytes.decode("utf-8")}, the unpaired surrogate an escape may leave
 * ({@code _has_lone_surrogate}), and a table of short strings already made.
 */
final class DecoderText {
  private DecoderText() {}

  /** True when {@code b} is UTF-8 as Python's strict decoder accepts it. */
  static boolean isUtf8(byte[] b) {
    int i = 0;
    int n = b.length;
    while (i < n) {
      int c = b[i];
      if (c >= 0) {
        i++;
        continue;
      }
      c &= 0xff;
      if (c < 0xc2 || c > 0xf4) {
        return false;
      }
      int need = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
      if (i + need >= n) {
        return false;
      }
      int lo = 0x80;
      int hi = 0xbf;
      if (c == 0xe0) {
        lo = 0xa0;
      } else if (c == 0xed) {
        hi = 0x9f;
      } else if (c == 0xf0) {
        lo = 0x90;
      } else if (c == 0xf4) {
        hi = 0x8f;
      }
      int c1 = b[i + 1] & 0xff;
      if (c1 < lo || c1 > hi) {
        return false;
      }
      for (int k = 2; k <= need; k++) {
        if ((b[i + k] & 0xc0) != 0x80) {
          return false;
        }
      }
      i += need + 1;
    }
    return true;
  }

  /**
   * Short ASCII strings already made (names, types, common values repeat in every record): a direct-mapped
   * table by hash, so each repeated text is allocated about once. A text the spec holds is the spec's own
   * instance ({@code canonical}: {@link Knowledge#canonical}). One reader at a time.
   */
  static final class Strings {
    static final int MAX_LENGTH = 40;
    private static final int SLOTS = 1 << 12;
    private final String[] texts = new String[SLOTS];
    private final byte[][] bytes = new byte[SLOTS][];
    private final int[] hashes = new int[SLOTS];
    private final boolean[] used = new boolean[SLOTS];
    private final UnaryOperator<String> canonical;

    Strings(UnaryOperator<String> canonical) {
      this.canonical = canonical;
    }

    String get(byte[] b, int start, int len, int hash) {
      int slot = (hash ^ (hash >>> 15) ^ len) & (SLOTS - 1);
      byte[] known = bytes[slot];
      if (known != null && hashes[slot] == hash && same(known, b, start, len)) {
        used[slot] = true;
        return texts[slot];
      }
      String s = canonical.apply(new String(b, start, len, StandardCharsets.ISO_8859_1));
      if (used[slot]) { // a second chance: a text read again since it came stays, a one-off value passes by
        used[slot] = false;
        return s;
      }
      bytes[slot] = Arrays.copyOfRange(b, start, start + len);
      hashes[slot] = hash;
      texts[slot] = s;
      return s;
    }

    /** A plain loop: these texts are short, and {@code Arrays.equals} over ranges costs more to set up. */
    private static boolean same(byte[] known, byte[] b, int start, int len) {
      if (known.length != len) {
        return false;
      }
      for (int i = 0; i < len; i++) {
        if (known[i] != b[start + i]) {
          return false;
        }
      }
      return true;
    }
  }

  /** True when some string of {@code value} (object keys included) holds an unpaired surrogate. */
  static boolean hasLoneSurrogate(Object value) {
    if (value instanceof String s) {
      return loneIn(s);
    }
    if (value instanceof Map<?, ?> map) {
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (loneIn((String) e.getKey()) || hasLoneSurrogate(e.getValue())) {
          return true;
        }
      }
      return false;
    }
    if (value instanceof List<?> list) {
      for (Object item : list) {
        if (hasLoneSurrogate(item)) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean loneIn(String s) {
    for (int i = 0, len = s.length(); i < len; i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          continue;
        }
        return true;
      }
      if (Character.isLowSurrogate(c)) {
        return true;
      }
    }
    return false;
  }
}
