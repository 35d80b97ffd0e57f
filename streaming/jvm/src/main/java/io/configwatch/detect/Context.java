package io.configwatch.detect;

import java.io.Serializable;

/**
 * What a finding copies from the event it is about ({@code udfs.rules.findings.to_table}): the
 * identity fields, already safe (a secret replaced by its marker), the event time, and the
 * fingerprint of the subject its alert id is keyed on.
 */
public record Context(String clientInstanceId, String clientSoftwareName, String clientSoftwareVersion,
    String clientId, String principal, String clientAddress, Long timestampMs, String subject)
    implements Serializable {}
