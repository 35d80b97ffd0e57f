package io.configwatch.gauges;

import static org.apache.spark.sql.functions.col;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.types.StructType;

/**
 * The job's two gauge steps on the JVM, called from PySpark ({@code streaming.jvm_gauges}) and the job's plan
 * ({@code io.configwatch.job.JobPlan}), which may run the detection step inside the first ({@link #withDetection}).
 *
 * <p>{@code routed} is the route stage's shuffle by {@code state_key}. In {@link #apply} (checkpoints begun before
 * the one keyed step) the detection step of the same query reads it as well (one exchange, reused): the
 * connection step takes the {@code conn|} keys and skips the rest. The totals step groups by name and version.
 * Both group by columns (no function per row) and keep their state in the query's RocksDB
 * state store, read and written in process, not over a socket to a Python worker.
 */
public final class GaugeSteps {
  private GaugeSteps() {}

  /**
   * The gauge and usage records of {@code routed}'s connection events and {@code detection}'s records
   * ({@code udfs.flow.PASSED_RECORD_SCHEMA}): one keyed step ({@link KeyedStep}) over {@code routed}, then the totals
   * step, which passes the detection step's records on.
   */
  public static Dataset<Row> withDetection(Dataset<Row> routed, String specJson,
      StatefulProcessor<String, Row, Row> detection, StructType detected) {
    Spec spec = Spec.parse(specJson);
    Dataset<Row> keyed = routed.groupBy(col("state_key")).as(Encoders.STRING(), Encoders.row(routed.schema()))
        .transformWithState(new KeyedStep(spec, routed.schema(), detection, detected), connectionTime(spec),
            OutputMode.Append(), Encoders.row(spec.keyed));
    return keyed.groupBy(col(KeyedStep.TOTALS_NAME), col(KeyedStep.TOTALS_VERSION))
        .as(Encoders.tuple(Encoders.STRING(), Encoders.STRING()), Encoders.row(spec.keyed))
        .transformWithState(new TotalsStep(spec, true), TimeMode.None(), OutputMode.Append(),
            Encoders.row(spec.passed));
  }

  /** The connection step's time mode: processing time for the lease's timers, else none. */
  private static TimeMode connectionTime(Spec spec) {
    return spec.lease() ? TimeMode.ProcessingTime() : TimeMode.None();
  }

  /** The gauge and usage records ({@code spec.record}) of {@code routed}'s connection events. */
  public static Dataset<Row> apply(Dataset<Row> routed, String specJson) {
    Spec spec = Spec.parse(specJson);
    Dataset<Row> deltas = routed.groupBy(col("state_key")).as(Encoders.STRING(), Encoders.row(routed.schema()))
        .transformWithState(new ConnectionStep(spec, routed.schema()), connectionTime(spec), OutputMode.Append(),
            Encoders.row(spec.delta));
    return deltas.groupBy(col("client_software_name"), col("client_software_version"))
        .as(Encoders.tuple(Encoders.STRING(), Encoders.STRING()), Encoders.row(spec.delta))
        .transformWithState(new TotalsStep(spec, false), TimeMode.None(), OutputMode.Append(),
            Encoders.row(spec.record));
  }
}
