package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.zip.CRC32;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * The job's first stage in the JVM: the twin of the Python route stage ({@code streaming.pipeline.RouteUdf}:
 * {@code udfs.decode}, the GX suite, {@code udfs.pipeline.route}). Each raw record (a Kafka record, or a
 * line of a replay file) is decoded once ({@link Decoder}), checked against the GX suite
 * ({@link Expectations}), and routed: an invalid record becomes its quarantine record, a push its
 * stateless findings and its fleet and group observations ({@link Detector}), a connection event its
 * row for the gauge steps. Every output row carries its {@code state_key} for the one shuffle.
 */
final class RouteStep implements MapPartitionsFunction<Row, Row> {
  private static final long serialVersionUID = 1L;

  private final Knowledge knowledge;
  private final Keyed keyed;
  private final StructType routed;
  private final boolean files;
  private final boolean validate;
  private final boolean lease;
  private final BucketKeys connKeys;
  private final BucketKeys passKeys;
  private final Set<String> kinds;
  private final Route names;
  private final RouteStats stats;
  private transient volatile Map<String, Integer> columns; // routed's column positions by name (literal keys)

  RouteStep(Knowledge knowledge, Keyed keyed, JsonNode options, boolean files, RouteStats stats) {
    this.stats = stats;
    this.knowledge = knowledge;
    this.keyed = keyed;
    this.files = files;
    JsonNode route = knowledge.section("route");
    routed = (StructType) DataType.fromJson(route.get("routed_schema").asText());
    validate = options.get("validate").asBoolean();
    lease = options.get("lease").asBoolean();
    kinds = Set.copyOf(Knowledge.strings(options.get("kinds")));
    names = new Route(route);
    int partitions = options.path("key_partitions").asInt(0);
    connKeys = BucketKeys.of(names.conn(), options.get("buckets").asInt(), partitions);
    passKeys = BucketKeys.of(names.pass(), names.passBuckets(), partitions);
  }

  /** The names a routed row uses: state key prefixes (separator included), output kinds, event names (from Python). */
  record Route(String pass, int passBuckets, String fleet, String group, String conn, String alerts,
      String quarantine, String gauges, String usage, String push, String opened, String closed, String unknown,
      String maskPrefix, int schemaVersion, String groupSubject) implements java.io.Serializable {
    Route(JsonNode r) {
      this(r.get("pass").asText(), r.get("pass_buckets").asInt(), r.get("fleet").asText(), r.get("group").asText(),
          r.get("conn").asText(), r.get("alerts").asText(), r.get("quarantine").asText(), r.get("gauges").asText(),
          r.get("usage").asText(), r.get("config_push").asText(), r.get("opened").asText(), r.get("closed").asText(),
          r.get("unknown_software").asText(), r.get("mask_prefix").asText(), r.get("schema_version").asInt(),
          r.get("group_subject").asText());
    }
  }

  @Override
  public Iterator<Row> call(Iterator<Row> input) {
    Engine engine = Engine.get(knowledge, keyed);
    long now = System.currentTimeMillis();
    Map<String, Long> counts = new java.util.HashMap<>();
    return new Iterator<>() {
      private final List<Row> pending = new ArrayList<>();
      private int next;
      private Iterator<Record> records = files ? lines(input) : kafka(input);

      @Override
      public boolean hasNext() {
        while (next >= pending.size()) {
          if (!records.hasNext()) {
            if (stats != null && !counts.isEmpty()) {
              stats.add(counts);
              counts.clear();
            }
            return false;
          }
          pending.clear();
          next = 0;
          route(engine, records.next(), now, pending, counts);
        }
        return true;
      }

      @Override
      public Row next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return pending.get(next++);
      }
    };
  }

  /** One raw record and where it came from. */
  private record Record(byte[] value, String topic, Integer partition, Long offset, String file, Long line) {}

  private static Iterator<Record> kafka(Iterator<Row> rows) {
    return Iterators.map(rows, r -> new Record((byte[]) r.get(0), r.getString(1), r.getInt(2), r.getLong(3), null,
        null));
  }

  /** The non-blank lines of whole replay files ({@code udfs.split_lines}): value, file, line from 1.
   * The file's text arrives as binary ({@code streaming.jvm_pipeline.route} casts it): Spark's text source keeps
   * the bytes as read, and a Java string would replace invalid UTF-8 that the decoder must see. */
  private static Iterator<Record> lines(Iterator<Row> rows) {
    List<Record> out = new ArrayList<>();
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        while (next >= out.size()) {
          if (!rows.hasNext()) {
            return false;
          }
          out.clear();
          next = 0;
          Row r = rows.next();
          byte[] bytes = r.isNullAt(0) ? new byte[0] : (byte[]) r.get(0); // the file's bytes as read, not re-encoded
          String file = r.getString(1);
          long line = 0;
          int start = 0;
          for (int i = 0; i <= bytes.length; i++) {
            if (i == bytes.length || bytes[i] == '\n') {
              line++;
              int end = i > start && bytes[i - 1] == '\r' ? i - 1 : i;
              if (!blank(bytes, start, end)) {
                byte[] value = new byte[end - start];
                System.arraycopy(bytes, start, value, 0, value.length);
                out.add(new Record(value, null, null, null, file, line));
              }
              start = i + 1;
            }
          }
        }
        return true;
      }

      @Override
      public Record next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return out.get(next++);
      }
    };
  }

  private static boolean blank(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (b[i] != ' ' && b[i] != '\t' && b[i] != '\r') {
        return false;
      }
    }
    return true;
  }

  private void route(Engine engine, Record record, long now, List<Row> out, Map<String, Long> counts) {
    long started = System.nanoTime();
    DecodedEvent event = engine.decoder.decode(record.value());
    String reason = event.reason();
    String detail = event.detail();
    long decoded = System.nanoTime();
    counts.merge("decode_nanos", decoded - started, Long::sum);
    counts.merge("records", 1L, Long::sum);
    if (reason == null && validate) {
      String failed = engine.expectations.firstFailure(event, now);
      counts.merge("gx_nanos", System.nanoTime() - decoded, Long::sum);
      if (failed != null) {
        reason = "expectation:" + failed;
        detail = engine.expectations.detail(failed);
        counts.merge("expectation_failed", 1L, Long::sum);
        counts.merge("failed:" + failed, 1L, Long::sum);
      }
    }
    counts.merge(reason == null ? "valid" : "invalid", 1L, Long::sum);
    if (reason != null) {
      if (kinds.contains(names.quarantine())) {
        String key = sourceKey(record);
        out.add(pass(names.quarantine(), key, quarantine(reason, detail, record, event.sizeBytes(), now)));
      }
      return;
    }
    String kind = (String) event.field("event");
    if (names.push().equals(kind) && kinds.contains(names.alerts())) {
      Detector.Prepared prepared = engine.detector.prepare(push(event), now);
      for (Findings.Finished f : prepared.findings()) {
        out.add(pass(names.alerts(), f.alertId(), f.json()));
      }
      if (prepared.fleet() != null) {
        out.add(fleetRow(prepared.fleet(), (String) event.field("connection_id")));
      }
      if (prepared.group() != null) {
        out.add(groupRow(prepared.group()));
      }
    }
    boolean counted = names.opened().equals(kind) || names.closed().equals(kind) || (lease && names.push().equals(kind));
    if (counted && (kinds.contains(names.gauges()) || kinds.contains(names.usage()))
        && event.field("connection_id") != null && event.field("timestamp_ms") != null) {
      out.add(connRow(engine, event, kind, record));
    }
  }

  static Push push(DecodedEvent e) {
    return new Push((String) e.field("client_instance_id"), (String) e.field("client_software_name"),
        (String) e.field("client_software_version"), (String) e.field("client_id"), (String) e.field("principal"),
        (String) e.field("client_address"), (String) e.field("connection_id"), (Long) e.field("timestamp_ms"),
        e.configs());
  }

  private static String sourceKey(Record r) {
    return r.file() != null ? r.file() + ":" + r.line() : r.topic() + "/" + r.partition() + "/" + r.offset();
  }

  /** {@code udfs.pipeline.quarantine_values}: the contract's quarantine record, never the payload. */
  private String quarantine(String reason, String detail, Record r, long size, long now) {
    Map<String, Object> source = new LinkedHashMap<>();
    if (r.file() != null) {
      source.put("file", r.file());
      source.put("line", r.line());
    } else {
      source.put("topic", r.topic());
      source.put("partition", r.partition() == null ? null : (long) r.partition());
      source.put("offset", r.offset());
    }
    Map<String, Object> rec = new LinkedHashMap<>();
    rec.put("schema_version", (long) names.schemaVersion());
    rec.put("reason", reason);
    rec.put("detail", detail);
    rec.put("source", source);
    rec.put("size_bytes", size);
    rec.put("quarantined_at_ms", now);
    return PyJson.dumps(rec, false);
  }

  private Object[] row() {
    return new Object[routed.size()];
  }

  private void set(Object[] row, String field, Object value) {
    Map<String, Integer> index = columns;
    if (index == null) {
      index = new java.util.HashMap<>();
      for (int i = 0; i < routed.size(); i++) {
        index.put(routed.fields()[i].name().intern(), i); // interned: the literal names below find their own key
      }
      columns = index;
    }
    row[index.get(field)] = value;
  }

  private Row pass(String kind, String outKey, String value) {
    Object[] row = row();
    set(row, "state_key", passKeys.key(outKey));
    set(row, "kind", kind);
    set(row, "out_key", outKey);
    set(row, "finding", value);
    return RowFactory.create(row);
  }

  private void context(Object[] row, Context c, String connectionId) {
    set(row, "client_instance_id", c.clientInstanceId());
    set(row, "client_software_name", c.clientSoftwareName());
    set(row, "client_software_version", c.clientSoftwareVersion());
    set(row, "client_id", c.clientId());
    set(row, "principal", c.principal());
    set(row, "client_address", c.clientAddress());
    set(row, "connection_id", connectionId);
    set(row, "timestamp_ms", c.timestampMs());
    set(row, "subject_fp", c.subject());
  }

  private Row fleetRow(FleetRow f, String connectionId) {
    Object[] row = row();
    set(row, "state_key", names.fleet() + f.peerGroup());
    set(row, "peer_group", f.peerGroup());
    set(row, "config_keys", scala.jdk.javaapi.CollectionConverters.asScala(f.keys()).toSeq());
    List<Double> values = new ArrayList<>(f.values().length);
    for (double v : f.values()) {
      values.add(v);
    }
    set(row, "config_values", scala.jdk.javaapi.CollectionConverters.asScala(values).toSeq());
    context(row, f.context(), connectionId);
    set(row, "kind", names.alerts());
    return RowFactory.create(row);
  }

  private Row groupRow(GroupRow g) {
    Object[] row = row();
    set(row, "state_key", names.group() + g.groupFp());
    set(row, "group_fp", g.groupFp());
    set(row, "group", g.group());
    set(row, "protocol", g.protocol());
    set(row, "strategy", g.strategy());
    set(row, "member_fp", g.member());
    set(row, "timestamp_ms", g.timestampMs());
    set(row, "subject_fp", names.groupSubject().replace("{fp}", g.groupFp()));
    set(row, "kind", names.alerts());
    return RowFactory.create(row);
  }

  /** {@code udfs.pipeline._gauge_rows} for one event. */
  private Row connRow(Engine engine, DecodedEvent e, String kind, Record r) {
    Object[] row = row();
    String cid = (String) e.field("connection_id");
    set(row, "state_key", connKeys.key(cid));
    set(row, "kind", names.gauges());
    set(row, "event", kind);
    set(row, "connection_id", cid);
    set(row, "timestamp_ms", e.field("timestamp_ms"));
    set(row, "client_instance_id", engine.detector.shownIdentity((String) e.field("client_instance_id")));
    set(row, "client_software_name", masked(engine, (String) e.field("client_software_name")));
    set(row, "client_software_version", masked(engine, (String) e.field("client_software_version")));
    if (r.file() != null) {
      set(row, "partition", crc32(r.file()));
      set(row, "offset", r.line());
    } else {
      set(row, "partition", r.partition() == null ? null : (long) r.partition());
      set(row, "offset", r.offset());
    }
    Object pairs = e.field("request_versions");
    if (pairs != null && names.closed().equals(kind)) {
      set(row, "request_pairs", e.requestPairs());
      set(row, "request_overflow", e.field("request_versions_overflow"));
    }
    return RowFactory.create(row);
  }

  /** {@code udfs.gauges.masked_texts} for one name or version. */
  private String masked(Engine engine, String value) {
    String text = value == null || value.isEmpty() ? names.unknown() : value;
    return engine.detector.scan().scan(text) == null ? text : names.maskPrefix() + keyed.fingerprint(text);
  }

  static long crc32(String text) {
    CRC32 crc = new CRC32();
    crc.update(Keyed.utf8(text));
    return crc.getValue();
  }

  @Override
  public String toString() {
    return "RouteStep(files=" + files + ", validate=" + validate + ", kinds=" + kinds + ")";
  }
}
