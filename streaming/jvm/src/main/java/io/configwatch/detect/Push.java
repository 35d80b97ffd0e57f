package io.configwatch.detect;

import java.io.Serializable;
import java.util.List;

/**
 * A decoded, valid {@code config_push}: the event fields the rules read (contract section 1) and
 * its entries in request order. Identity fields are as the event carried them: they may hold a
 * secret, which {@link Detector} replaces by its marker before anything leaves.
 */
public record Push(String clientInstanceId, String clientSoftwareName, String clientSoftwareVersion, String clientId,
    String principal, String clientAddress, String connectionId, Long timestampMs, List<Entry> entries)
    implements Serializable {

  /** The identity fields in {@code udfs.rules.batch.IDENTITY_FIELDS} order. */
  public String[] identity() {
    return new String[] {clientInstanceId, clientSoftwareName, clientSoftwareVersion, clientId, principal,
        clientAddress};
  }
}
