package io.configwatch.gauges;

import static org.apache.spark.sql.functions.col;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.TimeMode;

/**
 * The job's two gauge steps on the JVM, called from PySpark ({@code streaming.jvm_gauges}).
 *
 * <p>{@code routed} is the route stage's shuffle by {@code state_key}, which the Python step of
 * the same query reads as well (one exchange, reused): the connection step takes the
 * {@code conn|} keys and skips the rest, the totals step groups its deltas by name and version.
 * Both group by columns (no function per row) and keep their state in the query's RocksDB
 * state store, read and written in process, not over a socket to a Python worker.
 */
public final class GaugeSteps {
  private GaugeSteps() {}

  /** The gauge and usage records ({@code spec.record}) of {@code routed}'s connection events. */
  public static Dataset<Row> apply(Dataset<Row> routed, String specJson) {
    Spec spec = Spec.parse(specJson);
    TimeMode connTime = spec.lease() ? TimeMode.ProcessingTime() : TimeMode.None();
    Dataset<Row> deltas = routed.groupBy(col("state_key")).as(Encoders.STRING(), Encoders.row(routed.schema()))
        .transformWithState(new ConnectionStep(spec, routed.schema()), connTime, OutputMode.Append(),
            Encoders.row(spec.delta));
    return deltas.groupBy(col("client_software_name"), col("client_software_version"))
        .as(Encoders.tuple(Encoders.STRING(), Encoders.STRING()), Encoders.row(spec.delta))
        .transformWithState(new TotalsStep(spec), TimeMode.None(), OutputMode.Append(), Encoders.row(spec.record));
  }
}
