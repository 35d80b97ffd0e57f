package io.configwatch.detect;

import java.util.List;

/**
 * One fleet observation row ({@code udfs.rules.stateful._fleet_rows}): a push's documented numeric
 * values in one peer group, config key by config key, with the push's context (identity already safe).
 */
public record FleetRow(String peerGroup, List<String> keys, double[] values, Context context) {}
