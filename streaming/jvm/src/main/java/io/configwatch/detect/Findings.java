package io.configwatch.detect;

import java.util.List;

/**
 * Contract finding records (section 2) from raw findings and their context, as
 * {@code udfs.rules.findings.to_table} then {@code contract_json} make them: the same fields in the
 * same order, kind and severity from the catalog, the alert id under the deployment key, evidence
 * with its keys sorted, JSON text byte for byte as Python writes it.
 */
public final class Findings {
  private final Knowledge knowledge;
  private final Keyed keyed;
  private final int schemaVersion;

  public Findings(Knowledge knowledge, Keyed keyed) {
    this.knowledge = knowledge;
    this.keyed = keyed;
    this.schemaVersion = knowledge.section("contract").get("schema_version").asInt();
  }

  /** A finding ready to write: its alert id (the record key) and its contract JSON. */
  public record Finished(String alertId, String json) {}

  public Finished finish(RawFinding raw, Context context, long nowMs) {
    Knowledge.Rule rule = knowledge.rule(raw.rule());
    String subject = context.subject() == null ? "None" : context.subject(); // Python's str(None)
    String id = keyed.alertId(rule.kind(), rule.id(), subject, raw.keys());
    StringBuilder out = new StringBuilder(256);
    out.append("{\"schema_version\":").append(schemaVersion);
    field(out, "alert_id", id);
    field(out, "kind", rule.kind());
    field(out, "rule", rule.id());
    field(out, "severity", rule.severity());
    out.append(",\"keys\":");
    PyJson.write(out, raw.keys(), false);
    field(out, "client_instance_id", context.clientInstanceId());
    field(out, "client_software_name", context.clientSoftwareName());
    field(out, "client_software_version", context.clientSoftwareVersion());
    field(out, "client_id", context.clientId());
    field(out, "principal", context.principal());
    field(out, "client_address", context.clientAddress());
    field(out, "message", raw.message());
    out.append(",\"evidence\":");
    PyJson.write(out, raw.evidence(), true);
    out.append(",\"event_timestamp_ms\":");
    PyJson.write(out, context.timestampMs(), false);
    out.append(",\"detected_at_ms\":").append(nowMs).append('}');
    return new Finished(id, out.toString());
  }

  private static void field(StringBuilder out, String name, String value) {
    out.append(",\"").append(name).append("\":");
    PyJson.write(out, value, false);
  }

  /** The identity fields' names in order ({@code udfs.rules.batch.IDENTITY_FIELDS}). */
  public static List<String> identityFields(Knowledge knowledge) {
    return Knowledge.strings(knowledge.section("contract").get("identity_fields"));
  }
}
