package io.configwatch.detect;

/**
 * One group observation row ({@code udfs.rules.groups.group_observations}): the group id's fingerprint
 * and label (the id, or its marker when it is a secret), the member's effective protocol and canonical
 * strategy list, the member's subject fingerprint and the push's time.
 */
public record GroupRow(String groupFp, String group, String protocol, String strategy, String member,
    Long timestampMs) {}
