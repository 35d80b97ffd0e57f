package io.configwatch.detect;

import static org.apache.spark.sql.functions.col;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * The job's detection in the JVM, called from PySpark ({@code streaming.jvm_pipeline}) and the job's plan
 * ({@code io.configwatch.job.JobPlan}): {@link #route}
 * (decode, GX verdicts, stateless detection, routing; one pass per record) and {@link #detect} (the
 * keyed step over the shuffle by {@code state_key}). The spec is {@code streaming.jvm_spec.spec};
 * the key is the deployment's fingerprint key, which only {@link Keyed} holds.
 */
public final class DetectionPipeline {
  private DetectionPipeline() {}

  /** Routed rows of {@code raw} (the Kafka source's columns, or whole replay files: value, file). */
  public static Dataset<Row> route(Dataset<Row> raw, String specJson, byte[] key, String optionsJson,
      RouteStats stats) {
    Knowledge knowledge = Knowledge.parse(specJson);
    JsonNode options = json(optionsJson);
    boolean files = raw.schema().getFieldIndex("file").isDefined();
    RouteStep step = new RouteStep(knowledge, keyed(knowledge, key), options, files, stats);
    StructType routed = (StructType) DataType.fromJson(knowledge.section("route").get("routed_schema").asText());
    return raw.mapPartitions(step, Encoders.row(routed));
  }

  /** Decoded rows of Kafka records ({@code outSchemaJson}: {@code udfs.decode.output_schema} of raw's schema). */
  public static Dataset<Row> decode(Dataset<Row> raw, String specJson, byte[] key, String outSchemaJson,
      boolean validate) {
    Knowledge knowledge = Knowledge.parse(specJson);
    StructType out = (StructType) DataType.fromJson(outSchemaJson);
    return raw.mapPartitions(new DecodeStep(knowledge, keyed(knowledge, key), raw.schema(), out, validate),
        Encoders.row(out));
  }

  /** The detection records ({@code udfs.pipeline.FINAL_SCHEMA}) of the shuffled routed rows. */
  public static Dataset<Row> detect(Dataset<Row> shuffled, String specJson, byte[] key) {
    Step step = step(shuffled.schema(), specJson, key);
    return shuffled.groupBy(col("state_key")).as(Encoders.STRING(), Encoders.row(shuffled.schema()))
        .transformWithState(step.processor(), TimeMode.None(), OutputMode.Append(), Encoders.row(step.output()));
  }

  /** The keyed detection step over routed rows of schema {@code shuffled}, and its output schema. */
  public record Step(StatefulProcessor<String, Row, Row> processor, StructType output) {}

  /** The detection step alone, for {@link #detect} or for a keyed step that runs it for its keys. */
  public static Step step(StructType shuffled, String specJson, byte[] key) {
    Knowledge knowledge = Knowledge.parse(specJson);
    StructType last = (StructType) DataType.fromJson(knowledge.section("route").get("final_schema").asText());
    return new Step(new DetectionStep(knowledge, keyed(knowledge, key), shuffled), last);
  }

  static Keyed keyed(Knowledge knowledge, byte[] key) {
    JsonNode contract = knowledge.section("contract");
    return new Keyed(key, contract.get("fingerprint_hex_chars").asInt(), contract.get("alert_id_hex_chars").asInt());
  }

  private static JsonNode json(String text) {
    try {
      return new ObjectMapper().readTree(text);
    } catch (IOException e) {
      throw new IllegalArgumentException("not JSON: " + e.getMessage(), e);
    }
  }
}
