package io.configwatch.gauges;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * What the Python side decides and the gauge steps follow, read once from one JSON document
 * ({@code streaming.jvm_gauges.spec}): the schemas of the rows between and after the steps, the
 * contract's event and output names, the connection keys' prefix, the usage pair separator and
 * the transition's knobs. The steps find the fields of those schemas by name; their state
 * variables' shapes are written in Java and read by position. Nothing here is a config value.
 */
final class Spec implements Serializable {
  private static final long serialVersionUID = 1L;

  final StructType delta;      // connection step -> totals step (udfs.flow.DELTA_SCHEMA)
  final StructType record;     // totals step -> output (udfs.flow.RECORD_SCHEMA)
  final StructType keyed;      // one keyed step -> totals step (udfs.flow.KEYED_SCHEMA)
  final StructType passed;     // totals step -> output, records passed on (udfs.flow.PASSED_RECORD_SCHEMA)
  final String connPrefix;     // the routed connection events' state keys: "<prefix><bucket>"
  final String opened;
  final String closed;
  final String gaugesKind;
  final String usageKind;
  final long ttlMs;            // <= 0: no lease
  final long closedRetentionMs;
  final int usageIdsMax;
  final String usagePairSep;   // a usage state key: "<api_key><sep><version>" (udfs.gauges.usage_pair)
  final long sweepMin;         // udfs.gauges.SWEEP_MIN_MARKERS

  private Spec(JsonNode doc) {
    delta = (StructType) DataType.fromJson(doc.get("delta_schema").asText());
    record = (StructType) DataType.fromJson(doc.get("record_schema").asText());
    keyed = (StructType) DataType.fromJson(doc.get("keyed_schema").asText());
    passed = (StructType) DataType.fromJson(doc.get("passed_record_schema").asText());
    connPrefix = doc.get("conn_prefix").asText();
    opened = doc.get("opened").asText();
    closed = doc.get("closed").asText();
    gaugesKind = doc.get("gauges_kind").asText();
    usageKind = doc.get("usage_kind").asText();
    ttlMs = doc.get("ttl_ms").isNull() ? 0 : doc.get("ttl_ms").asLong();
    closedRetentionMs = doc.get("closed_retention_ms").asLong();
    usageIdsMax = doc.get("usage_ids_max").asInt();
    usagePairSep = doc.get("usage_pair_sep").asText();
    sweepMin = doc.get("sweep_min").asLong();
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

  /** The batch's processing time; the wall clock when the query gives none (no processing-time mode). */
  static long now(TimerValues timers) {
    long now = timers.getCurrentProcessingTimeInMs();
    return now >= 0 ? now : System.currentTimeMillis();
  }

  /** The struct type of {@code parent}'s field {@code name}, or of its elements when it is an array. */
  static StructType structOf(StructType parent, String name) {
    DataType type = parent.apply(name).dataType();
    return (StructType) (type instanceof ArrayType array ? array.elementType() : type);
  }
}
