package io.configwatch.gauges;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.ExpiredTimerInfo;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The one keyed step of a checkpoint that has one ({@code udfs.pipeline.StateLayout.one_keyed_step}), per
 * {@code state_key} of the route's shuffle: {@code conn|} keys run the {@link ConnectionStep}, every other key the
 * detection step handed in ({@code io.configwatch.detect.DetectionStep}). Each keeps its own state variables, by
 * their own names, under its own keys. One sort and one read of the shuffle, where a step each took two.
 *
 * <p>Output ({@code udfs.flow.KEYED_SCHEMA}), for the {@link TotalsStep}: a delta keyed by its name and version, or
 * a detection record (kind, key, contract JSON; never a tombstone) keyed by its kind and key.
 */
final class KeyedStep extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;
  static final String TOTALS_NAME = "totals_name";
  static final String TOTALS_VERSION = "totals_version";

  private final Spec spec;
  private final ConnectionStep connections;
  private final StatefulProcessor<String, Row, Row> detection;
  private final int kName, kVersion, kPassedKind, kPassedKey, kPassedValue;  // the output's fields
  private final int dName, dVersion, dKind, dKey, dValue;                     // a delta's, a detection record's
  private final int[] deltaAt;                                                // a delta field's place in the output

  KeyedStep(Spec spec, StructType routed, StatefulProcessor<String, Row, Row> detection, StructType detected) {
    this.spec = spec;
    this.connections = new ConnectionStep(spec, routed);
    this.detection = detection;
    kName = spec.keyed.fieldIndex(TOTALS_NAME);
    kVersion = spec.keyed.fieldIndex(TOTALS_VERSION);
    kPassedKind = spec.keyed.fieldIndex("passed_kind");
    kPassedKey = spec.keyed.fieldIndex("passed_key");
    kPassedValue = spec.keyed.fieldIndex("passed_value");
    dName = spec.delta.fieldIndex("client_software_name");
    dVersion = spec.delta.fieldIndex("client_software_version");
    dKind = detected.fieldIndex("kind");
    dKey = detected.fieldIndex("key");
    dValue = detected.fieldIndex("value");
    deltaAt = new int[spec.delta.size()];
    for (int i = 0; i < deltaAt.length; i++) {
      deltaAt[i] = spec.keyed.fieldIndex(spec.delta.fields()[i].name());
    }
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    connections.setHandle(getHandle());
    connections.init(outputMode, timeMode);
    detection.setHandle(getHandle());
    detection.init(outputMode, timeMode);
  }

  @Override
  public scala.collection.Iterator<Row> handleInputRows(String key, scala.collection.Iterator<Row> rows,
      TimerValues timers) {
    if (key.startsWith(spec.connPrefix)) {
      return deltas(connections.handleInputRows(key, rows, timers));
    }
    scala.collection.Iterator<Row> records = detection.handleInputRows(key, rows, timers);
    List<Row> out = new ArrayList<>();
    while (records.hasNext()) {
      Row r = records.next();
      Object[] v = keyedBy(r.getString(dKind), r.getString(dKey));
      v[kPassedKind] = r.getString(dKind);
      v[kPassedKey] = r.getString(dKey);
      v[kPassedValue] = r.getString(dValue);
      out.add(RowFactory.create(v));
    }
    return CollectionConverters.asScala(out.iterator());
  }

  /** Only connection buckets set timers (the lease). */
  @Override
  public scala.collection.Iterator<Row> handleExpiredTimer(String key, TimerValues timers, ExpiredTimerInfo info) {
    return deltas(connections.handleExpiredTimer(key, timers, info));
  }

  /** An output row's values, all null but its totals key. */
  private Object[] keyedBy(Object name, Object version) {
    Object[] v = new Object[spec.keyed.size()];
    v[kName] = name;
    v[kVersion] = version;
    return v;
  }

  private scala.collection.Iterator<Row> deltas(scala.collection.Iterator<Row> in) {
    List<Row> out = new ArrayList<>();
    while (in.hasNext()) {
      Row d = in.next();
      Object[] v = keyedBy(d.get(dName), d.get(dVersion));
      for (int i = 0; i < deltaAt.length; i++) {
        v[deltaAt[i]] = d.get(i);
      }
      out.add(RowFactory.create(v));
    }
    return CollectionConverters.asScala(out.iterator());
  }
}
