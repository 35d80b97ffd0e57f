package io.configwatch.detect;

import java.io.ByteArrayOutputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Keyed hashes under the deployment key: fingerprints ({@code configwatch.secrets.fingerprint}) and
 * alert ids ({@code udfs.rules.findings.alert_id}). The key never prints: {@link #toString()} hides it.
 */
public final class Keyed implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private final byte[] key;
  private final int fingerprintChars;
  private final int alertIdChars;
  // a Mac is not thread-safe, and one Keyed serves a task's threads; set once, then read without a lock
  private transient volatile ThreadLocal<Mac> macs;

  public Keyed(byte[] key, int fingerprintChars, int alertIdChars) {
    this.key = key.clone();
    this.fingerprintChars = fingerprintChars;
    this.alertIdChars = alertIdChars;
  }

  /** HMAC-SHA256 of the value's UTF-8 (lone surrogates as Python's surrogatepass), as hex, cut. */
  public String fingerprint(String value) {
    return hex(hmac(utf8(value)), fingerprintChars);
  }

  /** The deterministic id of a finding: kind, rule, subject and the sorted keys. */
  public String alertId(String kind, String rule, String subject, List<String> keys) {
    List<String> sorted = new ArrayList<>(keys);
    sorted.sort(PyJson::compareCodePoints);
    String message = kind + '\u001f' + rule + '\u001f' + subject + '\u001f' + String.join("\u001e", sorted);
    return hex(hmac(utf8(message)), alertIdChars);
  }

  private byte[] hmac(byte[] data) {
    ThreadLocal<Mac> local = macs;
    return (local != null ? local : macs()).get().doFinal(data);
  }

  private synchronized ThreadLocal<Mac> macs() {
    if (macs == null) {
      macs = ThreadLocal.withInitial(this::newMac);
    }
    return macs;
  }

  private Mac newMac() {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      // SecretKeySpec refuses an empty key; HMAC pads keys with zero bytes, so one zero byte is the same key
      mac.init(new SecretKeySpec(key.length == 0 ? new byte[1] : key, "HmacSHA256"));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 is not available", e);
    }
  }

  private static String hex(byte[] digest, int chars) {
    char[] out = new char[chars];
    for (int i = 0; i < chars; i++) {
      int b = digest[i / 2] & 0xff;
      out[i] = HEX[(i % 2 == 0) ? b >> 4 : b & 15];
    }
    return new String(out);
  }

  /** UTF-8 of {@code s}; a lone surrogate becomes its three-byte form (Python's "surrogatepass"). */
  public static byte[] utf8(String s) {
    boolean lone = false;
    for (int i = 0; i < s.length() && !lone; i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
        } else {
          lone = true;
        }
      } else if (Character.isLowSurrogate(c)) {
        lone = true;
      }
    }
    if (!lone) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(s.length() + 8);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        out.write(0xf0 | (cp >> 18));
        out.write(0x80 | ((cp >> 12) & 0x3f));
        out.write(0x80 | ((cp >> 6) & 0x3f));
        out.write(0x80 | (cp & 0x3f));
      } else if (c < 0x80) {
        out.write(c);
      } else if (c < 0x800) {
        out.write(0xc0 | (c >> 6));
        out.write(0x80 | (c & 0x3f));
      } else {
        out.write(0xe0 | (c >> 12));
        out.write(0x80 | ((c >> 6) & 0x3f));
        out.write(0x80 | (c & 0x3f));
      }
    }
    return out.toByteArray();
  }

  /** Tells keys apart without showing one: the fingerprint of a fixed text under this key. */
  public String digest() {
    return fingerprint("configwatch-key-digest");
  }

  @Override
  public String toString() {
    return "Keyed(key=**********)";
  }
}
