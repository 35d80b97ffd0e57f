package io.configwatch.gauges;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.MapState;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The second gauge step, per name and version: the JVM twin of {@code udfs.steps.second_step}
 * ({@code udfs.gauges.apply_deltas} and the usage fold).
 *
 * <p>State per (name, version): {@code totals} (open connections, distinct instances),
 * {@code instances} (instance id -> its open connections), and for closes that carry request
 * versions (a proxying gateway) {@code usage} ({@code udfs.gauges.usage_pair} -> connections),
 * {@code usage_instances} and {@code usage_totals}. A batch reads only the instances its deltas
 * name. Output ({@code udfs.flow.RECORD_SCHEMA}, typed, its fields set by name; the contract JSON
 * is made from it in {@code streaming.jvm_gauges}): a gauge row when a value changed (or the
 * lease dropped connections), a usage row when closes with usage arrived. After the one keyed step
 * ({@link KeyedStep}) the input also holds the detection step's records, which go on as they came
 * ({@code udfs.flow.PASSED_RECORD_SCHEMA}); a group with only those touches no state.
 */
final class TotalsStep extends StatefulProcessor<Tuple2<String, String>, Row, Row> {
  private static final long serialVersionUID = 1L;

  static final StructType TOTALS = new StructType()
      .add("connections", DataTypes.LongType).add("instances", DataTypes.LongType);
  static final StructType USAGE_TOTALS = new StructType().add("connections", DataTypes.LongType)
      .add("instances", DataTypes.LongType).add("overflow", DataTypes.LongType);

  private final Spec spec;
  private final int cInstance, cChange, cExpired, cPairs, cOverflow, oKind, oName, oVersion, oGauge, oUsage;
  private final StructType gaugeType, usageType, versionType;
  private final int pApiKey, pVersion;                               // a delta's request pair
  private final int gConnections, gInstances, gUpdated, gRemoved;    // the gauge struct
  private final int uVersions, uConnections, uInstances, uIds, uUpdated, uOverflow;  // the usage struct
  private final int vApiKey, vVersion, vConnections;                 // one of its request versions
  private transient ValueState<Row> totals;
  private transient MapState<String, Long> instances;
  private transient MapState<String, Long> usage;
  private transient MapState<String, Long> usageInstances;
  private transient ValueState<Row> usageTotals;

  private final StructType output;
  private final int cPassedKind, cPassedKey, cPassedValue, oPassedKey, oPassedValue;  // -1: nothing passed on

  /** {@code passing}: the input is the one keyed step's ({@code spec.keyed}), whose detection records go on. */
  TotalsStep(Spec spec, boolean passing) {
    this.spec = spec;
    StructType in = passing ? spec.keyed : spec.delta;
    output = passing ? spec.passed : spec.record;
    cPassedKind = passing ? in.fieldIndex("passed_kind") : -1;
    cPassedKey = passing ? in.fieldIndex("passed_key") : -1;
    cPassedValue = passing ? in.fieldIndex("passed_value") : -1;
    oPassedKey = passing ? output.fieldIndex("passed_key") : -1;
    oPassedValue = passing ? output.fieldIndex("passed_value") : -1;
    cInstance = in.fieldIndex("client_instance_id");
    cChange = in.fieldIndex("change");
    cExpired = in.fieldIndex("expired");
    cPairs = in.fieldIndex("request_pairs");
    cOverflow = in.fieldIndex("request_overflow");
    oKind = output.fieldIndex("kind");
    oName = output.fieldIndex("client_software_name");
    oVersion = output.fieldIndex("client_software_version");
    oGauge = output.fieldIndex("gauge");
    oUsage = output.fieldIndex("usage");
    StructType pair = Spec.structOf(spec.delta, "request_pairs");
    pApiKey = pair.fieldIndex("api_key");
    pVersion = pair.fieldIndex("version");
    gaugeType = Spec.structOf(spec.record, "gauge");
    gConnections = gaugeType.fieldIndex("connections");
    gInstances = gaugeType.fieldIndex("client_instances");
    gUpdated = gaugeType.fieldIndex("updated_at_ms");
    gRemoved = gaugeType.fieldIndex("removed");
    usageType = Spec.structOf(spec.record, "usage");
    uVersions = usageType.fieldIndex("request_versions");
    uConnections = usageType.fieldIndex("connections");
    uInstances = usageType.fieldIndex("client_instances");
    uIds = usageType.fieldIndex("client_instance_ids");
    uUpdated = usageType.fieldIndex("updated_at_ms");
    uOverflow = usageType.fieldIndex("overflow");
    versionType = Spec.structOf(usageType, "request_versions");
    vApiKey = versionType.fieldIndex("api_key");
    vVersion = versionType.fieldIndex("version");
    vConnections = versionType.fieldIndex("connections");
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    totals = getHandle().getValueState("totals", Encoders.row(TOTALS), TTLConfig.NONE());
    instances = getHandle().getMapState("instances", Encoders.STRING(), Encoders.LONG(), TTLConfig.NONE());
    usage = getHandle().getMapState("usage", Encoders.STRING(), Encoders.LONG(), TTLConfig.NONE());
    usageInstances = getHandle().getMapState("usage_instances", Encoders.STRING(), Encoders.LONG(),
        TTLConfig.NONE());
    usageTotals = getHandle().getValueState("usage_totals", Encoders.row(USAGE_TOTALS), TTLConfig.NONE());
  }

  @Override
  public scala.collection.Iterator<Row> handleInputRows(Tuple2<String, String> key,
                                                       scala.collection.Iterator<Row> rows, TimerValues timers) {
    long now = Spec.now(timers);
    List<Row> deltas = new ArrayList<>();
    List<Row> out = new ArrayList<>(2);
    while (rows.hasNext()) {
      Row r = rows.next();
      if (cPassedValue >= 0 && !r.isNullAt(cPassedValue)) {
        Object[] v = new Object[output.size()];
        v[oKind] = r.getString(cPassedKind);
        v[oPassedKey] = r.getString(cPassedKey);
        v[oPassedValue] = r.getString(cPassedValue);
        out.add(RowFactory.create(v));
      } else {
        deltas.add(r);
      }
    }
    if (deltas.isEmpty()) {
      return CollectionConverters.asScala(out.iterator());
    }
    String name = key._1();
    String version = key._2();
    List<Row> closes = new ArrayList<>();
    for (Row d : deltas) {
      if (!d.isNullAt(cPairs)) {
        closes.add(d);
      }
    }
    if (!closes.isEmpty()) {
      out.add(usageRow(name, version, closes, now));
    }
    Row gauge = fold(name, version, deltas, now);
    if (gauge != null) {
      out.add(gauge);
    }
    return CollectionConverters.asScala(out.iterator());
  }

  /** udfs.gauges.apply_deltas over the key's state: the gauge row when a value changed, else null. */
  private Row fold(String name, String version, List<Row> deltas, long now) {
    Row stored = totals.exists() ? totals.get() : null;
    long connBefore = stored == null ? 0 : stored.getLong(0);
    long instBefore = stored == null ? 0 : stored.getLong(1);
    Map<String, Long> refs = new LinkedHashMap<>();
    for (Row d : deltas) {
      String instance = d.isNullAt(cInstance) ? null : d.getString(cInstance);
      if (instance != null && !refs.containsKey(instance)) {
        Long n = instances.getValue(instance);
        refs.put(instance, n == null ? 0L : n);
      }
    }
    long connections = connBefore;
    long distinct = instBefore;
    long expired = 0;
    Map<String, Long> changed = new LinkedHashMap<>();
    for (Row d : deltas) {
      long change = d.getLong(cChange);
      connections += change;
      expired += !d.isNullAt(cExpired) && d.getBoolean(cExpired) ? 1 : 0;
      String instance = d.isNullAt(cInstance) ? null : d.getString(cInstance);
      if (instance != null) {
        long before = changed.getOrDefault(instance, refs.get(instance));
        long after = Math.max(before + change, 0);
        changed.put(instance, after);
        distinct += (after > 0 ? 1 : 0) - (before > 0 ? 1 : 0);
      }
    }
    long newConnections = Math.max(connections, 0);
    long newInstances = Math.max(distinct, 0);
    for (Map.Entry<String, Long> e : changed.entrySet()) {
      if (e.getValue() > 0) {
        instances.updateValue(e.getKey(), e.getValue());
      } else if (refs.get(e.getKey()) > 0) {
        instances.removeKey(e.getKey());
      }
    }
    if (newConnections > 0) {
      totals.update(RowFactory.create(newConnections, newInstances));
    } else {
      totals.clear();
    }
    if (newConnections == connBefore && newInstances == instBefore && expired == 0) {
      return null;
    }
    boolean removed = newConnections == 0;
    Object[] g = new Object[gaugeType.size()];
    g[gConnections] = newConnections;
    g[gInstances] = removed ? 0L : newInstances;
    g[gUpdated] = now;
    g[gRemoved] = removed;
    return record(spec.gaugesKind, name, version, oGauge, RowFactory.create(g));
  }

  /** Fold closes that carry request versions into the key's usage (udfs.steps._usage); the usage row. */
  private Row usageRow(String name, String version, List<Row> closes, long now) {
    Row stored = usageTotals.exists() ? usageTotals.get() : null;
    long connections = stored == null ? 0 : stored.getLong(0);
    long distinct = stored == null ? 0 : stored.getLong(1);
    long overflow = stored == null ? 0 : stored.getLong(2);
    Map<String, Long> counts = new LinkedHashMap<>();
    for (Row close : closes) {
      TreeSet<List<Long>> pairs = new TreeSet<>((a, b) -> a.get(0).equals(b.get(0))
          ? Long.compare(a.get(1), b.get(1)) : Long.compare(a.get(0), b.get(0)));
      for (Row p : close.<Row>getList(cPairs)) {
        pairs.add(List.of(((Number) p.get(pApiKey)).longValue(), ((Number) p.get(pVersion)).longValue()));
      }
      connections += 1;
      overflow += Spec.longOr(close, cOverflow, 0);
      for (List<Long> p : pairs) {
        String pair = p.get(0) + spec.usagePairSep + p.get(1);
        if (!counts.containsKey(pair)) {
          Long seen = usage.getValue(pair);
          counts.put(pair, seen == null ? 0L : seen);
        }
        counts.put(pair, counts.get(pair) + 1);
      }
      if (!close.isNullAt(cInstance)) {
        String instance = close.getString(cInstance);
        Long seen = usageInstances.getValue(instance);
        if (seen == null) {
          distinct += 1;
        }
        usageInstances.updateValue(instance, (seen == null ? 0L : seen) + 1);
      }
    }
    for (Map.Entry<String, Long> e : counts.entrySet()) {
      usage.updateValue(e.getKey(), e.getValue());
    }
    usageTotals.update(RowFactory.create(connections, distinct, overflow));
    List<long[]> triples = new ArrayList<>();
    scala.collection.Iterator<Tuple2<String, Long>> it = usage.iterator();
    while (it.hasNext()) {
      Tuple2<String, Long> kv = it.next();
      int sep = kv._1().indexOf(spec.usagePairSep);
      triples.add(new long[] {Long.parseLong(kv._1().substring(0, sep)),
          Long.parseLong(kv._1().substring(sep + spec.usagePairSep.length())), kv._2()});
    }
    triples.sort((a, b) -> a[0] != b[0] ? Long.compare(a[0], b[0])
        : a[1] != b[1] ? Long.compare(a[1], b[1]) : Long.compare(a[2], b[2]));
    List<Row> versions = new ArrayList<>(triples.size());
    for (long[] t : triples) {
      Object[] v = new Object[versionType.size()];
      v[vApiKey] = t[0];
      v[vVersion] = t[1];
      v[vConnections] = t[2];
      versions.add(RowFactory.create(v));
    }
    List<String> ids = new ArrayList<>();
    scala.collection.Iterator<String> keys = usageInstances.keys();
    while (keys.hasNext() && ids.size() < spec.usageIdsMax) {
      ids.add(keys.next());
    }
    Collections.sort(ids);
    Object[] u = new Object[usageType.size()];
    u[uVersions] = CollectionConverters.asScala(versions).toSeq();
    u[uConnections] = connections;
    u[uInstances] = distinct;
    u[uIds] = CollectionConverters.asScala(ids).toSeq();
    u[uUpdated] = now;
    u[uOverflow] = overflow;
    return record(spec.usageKind, name, version, oUsage, RowFactory.create(u));
  }

  private Row record(String kind, String name, String version, int column, Row fields) {
    Object[] v = new Object[output.size()];
    v[oKind] = kind;
    v[oName] = name;
    v[oVersion] = version;
    v[column] = fields;
    return RowFactory.create(v);
  }
}
