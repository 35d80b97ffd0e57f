package io.configwatch.detect;

import java.util.List;
import java.util.Map;

/**
 * A rule's finding before it meets its event ({@code udfs.rules.findings.RAW_COLUMNS} without the
 * row): rule id, the keys it names (in the order the finding shows them), one sentence, and the
 * evidence (maps, lists, strings, Long and Double numbers, booleans; never a config value).
 */
public record RawFinding(String rule, List<String> keys, String message, Map<String, Object> evidence) {}
