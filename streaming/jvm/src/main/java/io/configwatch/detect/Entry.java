package io.configwatch.detect;

import java.io.Serializable;

/**
 * One config entry of a decoded push (contract section 1): key, value as sent (null when the
 * policy redacted it or the client sent none), ConfigDef type name, is_default, redacted and the
 * redacted value's fingerprint. A missing {@code is_default} or {@code redacted} reads false.
 * Its {@code toString} leaves the value out (a record's default prints every component).
 */
public record Entry(String key, String value, String type, boolean isDefault, boolean redacted, String fingerprint)
    implements Serializable {

  @Override
  public String toString() {
    return "Entry[key=" + key + ", type=" + type + ", isDefault=" + isDefault + ", redacted=" + redacted
        + ", fingerprint=" + fingerprint + "]";
  }
}
