package io.configwatch.detect;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The keyed detection step in the JVM, per {@code state_key}: the twin of {@code udfs.steps.final_step}.
 * {@code pass|} keys carry finished records (quarantine, stateless findings) through; a
 * {@code fleet|<peer group>} key scores its rows against its peer summaries ({@link Fleet}); a
 * {@code group|<fp>} key judges its consumer group's members ({@link Groups}). The state of a
 * detection key is the same JSON text the Python step keeps, one value per key in the query's
 * state store. {@code conn|} keys belong to the connection step: beside this step over the same shuffle (it skips
 * them), or inside one keyed step with it ({@code io.configwatch.gauges.KeyedStep}, which never hands them here).
 */
final class DetectionStep extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;

  private final Knowledge knowledge;
  private final Keyed keyed;
  private final RouteStep.Route names;
  private final int cKind, cOutKey, cFinding, cPeerGroup, cKeys, cValues, cGroupFp, cGroup, cProtocol, cStrategy,
      cMember, cTs, cSubject;
  private final int[] cIdentity;
  private transient ValueState<String> detect;
  private transient Fleet fleet;
  private transient Groups groups;
  private transient Findings findings;

  DetectionStep(Knowledge knowledge, Keyed keyed, StructType in) {
    this.knowledge = knowledge;
    this.keyed = keyed;
    names = new RouteStep.Route(knowledge.section("route"));
    cKind = in.fieldIndex("kind");
    cOutKey = in.fieldIndex("out_key");
    cFinding = in.fieldIndex("finding");
    cPeerGroup = in.fieldIndex("peer_group");
    cKeys = in.fieldIndex("config_keys");
    cValues = in.fieldIndex("config_values");
    cGroupFp = in.fieldIndex("group_fp");
    cGroup = in.fieldIndex("group");
    cProtocol = in.fieldIndex("protocol");
    cStrategy = in.fieldIndex("strategy");
    cMember = in.fieldIndex("member_fp");
    cTs = in.fieldIndex("timestamp_ms");
    cSubject = in.fieldIndex("subject_fp");
    List<String> identity = Findings.identityFields(knowledge);
    cIdentity = new int[identity.size()];
    for (int i = 0; i < cIdentity.length; i++) {
      cIdentity[i] = in.fieldIndex(identity.get(i));
    }
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    detect = getHandle().getValueState("detect", Encoders.STRING(), TTLConfig.NONE());
    fleet = Fleet.of(knowledge);
    groups = Groups.of(knowledge);
    findings = new Findings(knowledge, keyed);
  }

  @Override
  public scala.collection.Iterator<Row> handleInputRows(String key, scala.collection.Iterator<Row> rows,
      TimerValues timers) {
    List<Row> out = new ArrayList<>();
    if (key.startsWith(names.conn())) {
      return CollectionConverters.asScala(out.iterator());
    }
    if (key.startsWith(names.pass())) {
      while (rows.hasNext()) {
        Row r = rows.next();
        out.add(RowFactory.create(r.getString(cKind), r.getString(cOutKey), r.getString(cFinding), false));
      }
      return CollectionConverters.asScala(out.iterator());
    }
    long now = now(timers);
    String prior = detect.exists() ? detect.get() : null;
    Fleet.Result result;
    if (key.startsWith(names.fleet())) {
      List<FleetRow> batch = new ArrayList<>();
      while (rows.hasNext()) {
        Row r = rows.next();
        batch.add(new FleetRow(r.getString(cPeerGroup), CollectionConverters.asJava(r.<String>getSeq(cKeys)),
            doubles(r.<Double>getSeq(cValues)), context(r)));
      }
      result = fleet.step(key.substring(names.fleet().length()), batch, prior);
    } else if (key.startsWith(names.group())) {
      List<GroupRow> batch = new ArrayList<>();
      while (rows.hasNext()) {
        Row r = rows.next();
        batch.add(new GroupRow(r.getString(cGroupFp), r.getString(cGroup), r.getString(cProtocol),
            r.isNullAt(cStrategy) ? null : r.getString(cStrategy), r.getString(cMember),
            r.isNullAt(cTs) ? null : r.getLong(cTs)));
      }
      result = groups.step(batch, prior);
    } else {
      throw new IllegalStateException("unknown state key kind in " + key);
    }
    if (result.stateJson() == null) {
      detect.clear();
    } else {
      detect.update(result.stateJson());
    }
    List<Findings.Finished> done = new ArrayList<>();
    for (Fleet.Scored s : result.findings()) {
      done.add(findings.finish(s.finding(), s.context(), now));
    }
    done.sort(Comparator.comparing(Findings.Finished::alertId));
    for (Findings.Finished f : done) {
      out.add(RowFactory.create(names.alerts(), f.alertId(), f.json(), false));
    }
    return CollectionConverters.asScala(out.iterator());
  }

  private Context context(Row r) {
    String[] id = new String[cIdentity.length];
    for (int i = 0; i < id.length; i++) {
      id[i] = r.isNullAt(cIdentity[i]) ? null : r.getString(cIdentity[i]);
    }
    return new Context(id[0], id[1], id[2], id[3], id[4], id[5], r.isNullAt(cTs) ? null : r.getLong(cTs),
        r.getString(cSubject));
  }

  private static double[] doubles(scala.collection.Seq<Double> seq) {
    List<Double> list = CollectionConverters.asJava(seq);
    double[] out = new double[list.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = list.get(i);
    }
    return out;
  }

  private static long now(TimerValues timers) {
    long now = timers.getCurrentProcessingTimeInMs();
    return now >= 0 ? now : System.currentTimeMillis();
  }
}
