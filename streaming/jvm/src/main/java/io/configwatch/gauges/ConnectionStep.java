package io.configwatch.gauges;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.ExpiredTimerInfo;
import org.apache.spark.sql.streaming.MapState;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The first gauge step, per connection bucket ({@code conn|<n>}): the JVM twin of
 * {@code udfs.gauges.step_bucket} and {@code udfs.steps} (same state, same order, same deltas).
 *
 * <p>State per bucket: {@code entries}, one value per connection id (its counted identity and
 * its close marker, either may be null), and {@code clock} (the bucket's event-time clock, lease
 * total and marker bookkeeping). A batch reads and writes only the entries of the connections it
 * names. Output: one delta row ({@code +1}/{@code -1} under the open's name and version, for
 * {@link TotalsStep}) per connection that started or stopped counting. Routed rows of other state
 * keys belong to the detection step, which reads the same shuffle (beside this step on a checkpoint
 * begun with two keyed steps; {@link KeyedStep} sends it only its own keys): they are skipped here. With a
 * lease, a processing-time timer per bucket drops connections not seen for {@code ttl_ms}. Names
 * and versions arrive masked; nothing here holds a config value.
 */
final class ConnectionStep extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionStep.class);

  static final StructType ENTRY = new StructType()
      .add("name", DataTypes.StringType).add("version", DataTypes.StringType)
      .add("instance", DataTypes.StringType).add("opened_ms", DataTypes.LongType)
      .add("last_event_ms", DataTypes.LongType).add("seen_ms", DataTypes.LongType)
      .add("closed_ms", DataTypes.LongType);
  static final StructType CLOCK = new StructType()
      .add("clock_ms", DataTypes.LongType).add("expired_total", DataTypes.LongType)
      .add("markers_written", DataTypes.LongType).add("markers_live", DataTypes.LongType);
  private static final int E_CLOSED = ENTRY.fieldIndex("closed_ms");

  /** The bucket's clock row as values (all 0 before the bucket's first batch). */
  private record Clock(long clockMs, long expiredTotal, long markersWritten, long markersLive) {
    Row row() {
      return RowFactory.create(clockMs, expiredTotal, markersWritten, markersLive);
    }
  }

  private final Spec spec;
  private final int cEvent, cCid, cTs, cName, cVersion, cInstance, cPartition, cOffset, cPairs, cOverflow;
  private final int oName, oVersion, oInstance, oChange, oExpired, oPairs, oOverflow;
  private transient MapState<String, Row> entries;
  private transient ValueState<Row> clock;

  ConnectionStep(Spec spec, StructType in) {
    this.spec = spec;
    cEvent = in.fieldIndex("event");
    cCid = in.fieldIndex("connection_id");
    cTs = in.fieldIndex("timestamp_ms");
    cName = in.fieldIndex("client_software_name");
    cVersion = in.fieldIndex("client_software_version");
    cInstance = in.fieldIndex("client_instance_id");
    cPartition = in.fieldIndex("partition");
    cOffset = in.fieldIndex("offset");
    cPairs = in.fieldIndex("request_pairs");
    cOverflow = in.fieldIndex("request_overflow");
    StructType out = spec.delta;
    oName = out.fieldIndex("client_software_name");
    oVersion = out.fieldIndex("client_software_version");
    oInstance = out.fieldIndex("client_instance_id");
    oChange = out.fieldIndex("change");
    oExpired = out.fieldIndex("expired");
    oPairs = out.fieldIndex("request_pairs");
    oOverflow = out.fieldIndex("request_overflow");
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    entries = getHandle().getMapState("entries", Encoders.STRING(), Encoders.row(ENTRY), TTLConfig.NONE());
    clock = getHandle().getValueState("clock", Encoders.row(CLOCK), TTLConfig.NONE());
  }

  /** One open connection as counted (udfs.gauges.Conn). */
  private record Conn(String name, String version, String instance, long openedMs, long lastEventMs,
                      long seenMs) {
    Conn touched(long ts, long now) {
      return new Conn(name, version, instance, openedMs, Math.max(lastEventMs, ts), now);
    }
  }

  /** A connection that started (+1) or stopped (-1) counting (udfs.gauges.Delta). */
  private record Delta(Conn conn, int change, boolean expired, Object pairs, Object overflow) {}

  private record Event(String event, long ts, String cid, String name, String version, String instance,
                       Long partition, Long offset, Object pairs, Object overflow) {}

  private static final Comparator<Long> NULLS_LAST = Comparator.nullsLast(Comparator.naturalOrder());
  private static final Comparator<Event> ORDER = Comparator.comparingLong(Event::ts)
      .thenComparing(Event::partition, NULLS_LAST).thenComparing(Event::offset, NULLS_LAST);

  @Override
  public scala.collection.Iterator<Row> handleInputRows(String key, scala.collection.Iterator<Row> rows,
                                                       TimerValues timers) {
    if (!key.startsWith(spec.connPrefix)) {
      return scala.collection.Iterator.empty();  // the detection step's key
    }
    long now = Spec.now(timers);
    List<Event> events = new ArrayList<>();
    while (rows.hasNext()) {
      Row r = rows.next();
      if (r.isNullAt(cCid) || r.isNullAt(cTs)) {
        continue;
      }
      events.add(new Event(r.getString(cEvent), ((Number) r.get(cTs)).longValue(), r.getString(cCid),
          r.getString(cName), r.getString(cVersion), r.isNullAt(cInstance) ? null : r.getString(cInstance),
          r.isNullAt(cPartition) ? null : ((Number) r.get(cPartition)).longValue(),
          r.isNullAt(cOffset) ? null : ((Number) r.get(cOffset)).longValue(), r.get(cPairs), r.get(cOverflow)));
    }
    events.sort(ORDER);  // List.sort is stable, like the Python side's sort
    Map<String, Row> stored = new HashMap<>();
    Map<String, Conn> conns = new HashMap<>();
    Map<String, Long> markers = new HashMap<>();
    for (Event e : events) {
      if (!stored.containsKey(e.cid)) {
        Row value = entries.getValue(e.cid);
        stored.put(e.cid, value);
        if (value != null) {
          Conn conn = connOf(value);
          if (conn != null) {
            conns.put(e.cid, conn);
          }
          if (!value.isNullAt(E_CLOSED)) {
            markers.put(e.cid, value.getLong(E_CLOSED));
          }
        }
      }
    }
    Clock before = readClock();
    long clockMs = before.clockMs;
    long written = before.markersWritten;
    long live = before.markersLive;
    for (Event e : events) {
      clockMs = Math.max(clockMs, e.ts);
    }
    Step step = apply(events, conns, markers, clockMs, now);
    for (String cid : step.touched()) {
      Row was = stored.get(cid);
      Conn conn = step.live.containsKey(cid) ? step.live.get(cid) : (was == null ? null : connOf(was));
      Long marker = step.marks.containsKey(cid) ? step.marks.get(cid)
          : (was == null || was.isNullAt(E_CLOSED) ? null : was.getLong(E_CLOSED));
      put(cid, conn, marker);
    }
    written += step.marks.size();
    if (written > Math.max(spec.sweepMin, live)) {  // udfs.gauges.prune_due: amortised O(1) per marker
      live = sweep(clockMs);
      written = 0;
    }
    clock.update(new Clock(clockMs, before.expiredTotal, written, live).row());
    if (spec.lease() && !getHandle().listTimers().hasNext()) {
      getHandle().registerTimer(now + spec.ttlMs);
    }
    List<Row> deltas = new ArrayList<>(step.deltas.size());
    for (Delta d : step.deltas) {
      if (d != null) {
        deltas.add(deltaRow(d));
      }
    }
    return CollectionConverters.asScala(deltas.iterator());
  }

  /** The result of one batch of a bucket (udfs.gauges.BucketStep). */
  private static final class Step {
    final Map<String, Conn> live = new LinkedHashMap<>();  // null: closed in this batch
    final Map<String, Long> marks = new LinkedHashMap<>();
    final List<Delta> deltas = new ArrayList<>();           // null: cancelled
    final Set<String> stored = new LinkedHashSet<>();        // connections stored before the batch

    /** Connections whose entry may change: stored or still open, and every marker written. */
    Set<String> touched() {
      Set<String> ids = new LinkedHashSet<>();
      for (Map.Entry<String, Conn> e : live.entrySet()) {
        if (e.getValue() != null || stored.contains(e.getKey())) {
          ids.add(e.getKey());
        }
      }
      ids.addAll(marks.keySet());
      return ids;
    }
  }

  /** udfs.gauges.step_bucket: the events in order against the stored connections and markers. */
  private Step apply(List<Event> events, Map<String, Conn> conns, Map<String, Long> markers, long clockMs,
                     long now) {
    long horizon = clockMs - spec.closedRetentionMs;
    Step s = new Step();
    s.stored.addAll(conns.keySet());
    Map<String, Integer> born = new HashMap<>();  // opened in this batch: the index of their +1
    for (Event e : events) {
      Conn conn = s.live.containsKey(e.cid) ? s.live.get(e.cid) : conns.get(e.cid);
      if (conn != null) {
        if (e.ts < conn.openedMs) {
          continue;  // older than the open that counts: a stale redelivery
        }
        if (spec.closed.equals(e.event)) {
          s.live.put(e.cid, null);
          s.marks.put(e.cid, e.ts);
          if (born.containsKey(e.cid) && e.pairs == null) {  // opened and closed within the batch
            s.deltas.set(born.remove(e.cid), null);
          } else {
            s.deltas.add(new Delta(conn, -1, false, e.pairs, e.pairs == null ? null : e.overflow));
          }
        } else {  // a repeated open or any other event of an open connection: only the lease moves
          s.live.put(e.cid, conn.touched(e.ts, now));
        }
        continue;
      }
      Long known = s.marks.containsKey(e.cid) ? s.marks.get(e.cid) : markers.get(e.cid);
      if (known != null && known < horizon) {
        known = null;
      }
      if (spec.closed.equals(e.event)) {  // unknown connection: remember the close
        s.marks.put(e.cid, known == null ? e.ts : Math.max(known, e.ts));
      } else if (spec.opened.equals(e.event)) {
        if (known != null && e.ts <= known) {
          continue;  // an open no newer than a close already applied: redelivered
        }
        String instance = e.instance == null || e.instance.isEmpty() ? null : e.instance;
        Conn opened = new Conn(e.name, e.version, instance, e.ts, e.ts, now);
        s.live.put(e.cid, opened);
        born.put(e.cid, s.deltas.size());
        s.deltas.add(new Delta(opened, 1, false, null, null));
      }
    }
    return s;
  }

  private Clock readClock() {
    if (!clock.exists()) {
      return new Clock(0, 0, 0, 0);
    }
    Row c = clock.get();
    return new Clock(c.getLong(0), c.getLong(1), c.getLong(2), c.getLong(3));  // CLOCK's order
  }

  private static Conn connOf(Row value) {
    if (value.isNullAt(0)) {
      return null;
    }
    return new Conn(value.getString(0), value.getString(1), value.isNullAt(2) ? null : value.getString(2),
        value.getLong(3), value.getLong(4), value.getLong(5));
  }

  private void put(String cid, Conn conn, Long marker) {
    if (conn == null && marker == null) {
      entries.removeKey(cid);
    } else if (conn == null) {
      entries.updateValue(cid, RowFactory.create(null, null, null, null, null, null, marker));
    } else {
      entries.updateValue(cid, RowFactory.create(conn.name, conn.version, conn.instance, conn.openedMs,
          conn.lastEventMs, conn.seenMs, marker));
    }
  }

  /** Drop the markers behind the retention horizon; the entries left (udfs.steps._Entries.sweep). */
  private long sweep(long clockMs) {
    long horizon = clockMs - spec.closedRetentionMs;
    long total = 0;
    List<Tuple2<String, Row>> stale = new ArrayList<>();
    scala.collection.Iterator<Tuple2<String, Row>> it = entries.iterator();
    while (it.hasNext()) {
      Tuple2<String, Row> kv = it.next();
      total++;
      Row v = kv._2();
      if (!v.isNullAt(E_CLOSED) && v.getLong(E_CLOSED) < horizon) {
        stale.add(kv);
      }
    }
    long forgotten = 0;
    for (Tuple2<String, Row> kv : stale) {
      Conn conn = connOf(kv._2());
      put(kv._1(), conn, null);
      forgotten += conn == null ? 1 : 0;
    }
    return total - forgotten;
  }

  private Row deltaRow(Delta d) {
    Object[] v = new Object[spec.delta.size()];
    v[oName] = d.conn.name;
    v[oVersion] = d.conn.version;
    v[oInstance] = d.conn.instance;
    v[oChange] = (long) d.change;
    v[oExpired] = d.expired;
    v[oPairs] = d.pairs;
    v[oOverflow] = d.overflow;
    return RowFactory.create(v);
  }

  /** The bucket's lease timer fired: drop the connections not seen for ttl_ms (udfs.steps.expire_step). */
  @Override
  public scala.collection.Iterator<Row> handleExpiredTimer(String key, TimerValues timers,
                                                          ExpiredTimerInfo info) {
    long now = Spec.now(timers);
    List<Tuple2<String, Conn>> open = new ArrayList<>();
    scala.collection.Iterator<Tuple2<String, Row>> it = entries.iterator();
    while (it.hasNext()) {
      Tuple2<String, Row> kv = it.next();
      Conn conn = connOf(kv._2());
      if (conn != null) {
        open.add(new Tuple2<>(kv._1(), conn));
      }
    }
    List<Row> deltas = new ArrayList<>();
    long nextSeen = Long.MAX_VALUE;
    for (Tuple2<String, Conn> kv : open) {
      Conn conn = kv._2();
      if (conn.seenMs + spec.ttlMs <= now) {
        put(kv._1(), null, conn.lastEventMs);
        deltas.add(deltaRow(new Delta(conn, -1, true, null, null)));
      } else {
        nextSeen = Math.min(nextSeen, conn.seenMs);
      }
    }
    Clock c = readClock();
    long total = c.expiredTotal + deltas.size();
    clock.update(new Clock(c.clockMs, total, c.markersWritten + deltas.size(), c.markersLive).row());
    if (nextSeen != Long.MAX_VALUE) {
      getHandle().registerTimer(nextSeen + spec.ttlMs);
    }
    if (!deltas.isEmpty()) {
      LOG.warn("connection lease: dropped {} connection(s) with no event for {} ms or more "
          + "({} dropped since the checkpoint began)", deltas.size(), spec.ttlMs, total);
    }
    return CollectionConverters.asScala(deltas.iterator());
  }
}
