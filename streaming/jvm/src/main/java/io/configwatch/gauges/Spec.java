package io.configwatch.gauges;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * What the Python side decides and the gauge steps follow, read once from one JSON document
 * ({@code streaming.jvm_gauges.spec}): the schemas of the rows between and after the steps, the
 * contract's event and output names, the connection keys' prefix and the transition's knobs.
 * Columns are found by name in those schemas. Nothing here is a config value.
 */
final class Spec implements Serializable {
  private static final long serialVersionUID = 1L;

  final StructType delta;      // connection step -> totals step (udfs.flow.DELTA_SCHEMA)
  final StructType record;     // totals step -> output (udfs.flow.RECORD_SCHEMA)
  final String connPrefix;     // the routed connection events' state keys: "<prefix><bucket>"
  final String opened;
  final String closed;
  final String gaugesKind;
  final String usageKind;
  final long ttlMs;            // <= 0: no lease
  final long closedRetentionMs;
  final int usageIdsMax;

  private Spec(JsonNode doc) {
    delta = (StructType) DataType.fromJson(doc.get("delta_schema").asText());
    record = (StructType) DataType.fromJson(doc.get("record_schema").asText());
    connPrefix = doc.get("conn_prefix").asText();
    opened = doc.get("opened").asText();
    closed = doc.get("closed").asText();
    gaugesKind = doc.get("gauges_kind").asText();
    usageKind = doc.get("usage_kind").asText();
    ttlMs = doc.get("ttl_ms").isNull() ? 0 : doc.get("ttl_ms").asLong();
    closedRetentionMs = doc.get("closed_retention_ms").asLong();
    usageIdsMax = doc.get("usage_ids_max").asInt();
  }

  static Spec parse(String json) {
    try {
      return new Spec(new ObjectMapper().readTree(json));
    } catch (IOException | NullPointerException | ClassCastException e) {
      throw new IllegalArgumentException("not a configwatch gauge spec: " + e, e);
    }
  }

  boolean lease() {
    return ttlMs > 0;
  }

  static long longOr(Row row, int i, long otherwise) {
    return row.isNullAt(i) ? otherwise : ((Number) row.get(i)).longValue();
  }
}
