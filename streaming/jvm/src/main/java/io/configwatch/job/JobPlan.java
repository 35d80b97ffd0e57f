package io.configwatch.job;

import static org.apache.spark.sql.functions.col;

import io.configwatch.detect.DetectionPipeline;
import io.configwatch.detect.Knowledge;
import io.configwatch.detect.RouteStats;
import io.configwatch.gauges.GaugeSteps;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The job's plan for a new checkpoint, built in one call from PySpark ({@code streaming.jvm_pipeline.plan}):
 * the route stage ({@link DetectionPipeline#route}), one shuffle by {@code state_key}, and the detection step
 * ({@link DetectionPipeline#step}) with the gauge steps ({@link GaugeSteps}), whose record rows become output
 * records by the SQL expressions Python builds from the contract ({@code streaming.jvm_gauges.record_exprs}).
 * One call instead of a py4j round trip per step, column and expression: a job start made 316 of them.
 */
public final class JobPlan {
  private JobPlan() {}

  /**
   * The output records ({@code udfs.pipeline.FINAL_SCHEMA}: kind, key, value, tombstone) of {@code raw}.
   * {@code oneStep}: the detection step inside the connection step's keyed step, its records passed on by the
   * totals step (one sort of the shuffle; {@code recordExprsJson} reads passed records too); else the detection
   * step and the gauge steps each over the shuffle, their outputs united (checkpoints begun that way).
   */
  public static Dataset<Row> plan(Dataset<Row> raw, String specJson, byte[] key, String routeOptionsJson,
      RouteStats stats, String gaugeSpecJson, String recordExprsJson, boolean oneStep) {
    Dataset<Row> shuffled = DetectionPipeline.route(raw, specJson, key, routeOptionsJson, stats)
        .repartition(col("state_key"));
    String[] exprs = Knowledge.strings(KafkaBatches.parse(recordExprsJson)).toArray(new String[0]);
    if (oneStep) {
      DetectionPipeline.Step detection = DetectionPipeline.step(shuffled.schema(), specJson, key);
      return GaugeSteps.withDetection(shuffled, gaugeSpecJson, detection.processor(), detection.output())
          .selectExpr(exprs);
    }
    Dataset<Row> gauges = GaugeSteps.apply(shuffled, gaugeSpecJson).selectExpr(exprs);
    return DetectionPipeline.detect(shuffled, specJson, key).unionByName(gauges);
  }
}
