package io.configwatch.job;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.when;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.configwatch.detect.RouteStats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Observation;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.StreamingQuery;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The job's {@code foreachBatch} function when every output goes to Kafka and no notifier waits
 * for the findings: {@code streaming.job.batches.BatchFunction} on the JVM, so a batch does not
 * cross into Python. Each batch is written by Spark's Kafka sink in one Spark job that also counts
 * the records per kind ({@code observe}); the batch's report (counts, the route stage's counts
 * since the last batch, seconds) is queued for the driver's Python side, which prints it.
 *
 * <p>Graceful stop, as the Python function: {@link #beginStop} waits for a batch that is writing
 * and returns its id; every later batch writes nothing, waits until the query is stopped, and ends
 * with an {@link InterruptedException}, which Spark treats as a stop of a terminated query, so the
 * batch stays uncommitted and runs again on restart. At least once, as Spark's Kafka sink.
 */
public final class KafkaBatches implements VoidFunction2<Dataset<Row>, Long> {
  private static final long serialVersionUID = 1L;
  private static final long PARK_NANOS = TimeUnit.SECONDS.toNanos(300);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int MAX_REPORTS = 10_000; // unread reports kept (the oldest go first)

  private final List<String> kinds = new ArrayList<>();
  private final Map<String, String> topics = new LinkedHashMap<>(); // kind -> topic
  private final Map<String, String> options = new LinkedHashMap<>(); // the Kafka sink's options
  private final transient RouteStats stats;
  private final transient LinkedBlockingQueue<String> reports = new LinkedBlockingQueue<>(MAX_REPORTS);
  private final transient Object lock = new Object(); // held while a batch writes
  private volatile boolean stopping;
  private long lastWritten = -1;
  private Map<String, Long> statsBefore = new HashMap<>();
  private transient volatile StreamingQuery query;

  /**
   * {@code spec}: JSON {@code {"kinds": [...], "topics": {kind: topic}, "options": {name: value}}};
   * {@code stats}: the route stage's accumulator, or null.
   */
  public KafkaBatches(String spec, RouteStats stats) {
    JsonNode root = parse(spec);
    root.get("kinds").forEach(k -> kinds.add(k.asText()));
    root.get("topics").fields().forEachRemaining(e -> topics.put(e.getKey(), e.getValue().asText()));
    root.get("options").fields().forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
    if (kinds.isEmpty()) {
      throw new IllegalArgumentException("no output kinds");
    }
    this.stats = stats;
  }

  /** {@code text} as a JSON tree (the job package's specs arrive from Python as JSON text). */
  static JsonNode parse(String text) {
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The running query, once started: a refused batch waits until it is stopped. */
  public void setQuery(StreamingQuery query) {
    this.query = query;
  }

  /** Refuse every batch from now on; waits for a batch that is writing; its id, or -1. */
  public long beginStop() {
    stopping = true;
    synchronized (lock) {
      return lastWritten;
    }
  }

  /** The next batch report (JSON), waiting up to {@code timeoutMs}; null when there is none. */
  public String takeReport(long timeoutMs) throws InterruptedException {
    return reports.poll(timeoutMs, TimeUnit.MILLISECONDS);
  }

  @Override
  public void call(Dataset<Row> batch, Long epochId) throws Exception {
    synchronized (lock) {
      if (!stopping) {
        write(batch, epochId);
        return;
      }
    }
    refuse(epochId);
  }

  private void refuse(long epochId) throws InterruptedException {
    long deadline = System.nanoTime() + PARK_NANOS;
    while (System.nanoTime() < deadline && (query == null || query.isActive())) {
      Thread.sleep(50); // query.stop() interrupts this thread
    }
    throw new InterruptedException("batch " + epochId + " refused, the job is stopping");
  }

  private void write(Dataset<Row> batch, long epochId) throws InterruptedException {
    long started = System.nanoTime();
    Observation counts = new Observation("batch-" + epochId);
    Column[] perKind = new Column[kinds.size()];
    for (int i = 0; i < perKind.length; i++) {
      perKind[i] = sum(col("kind").equalTo(kinds.get(i)).cast("long")).alias(kinds.get(i));
    }
    save(batch.observe(counts, perKind[0], Arrays.copyOfRange(perKind, 1, perKind.length)));
    Map<String, Object> written = CollectionConverters.asJava(counts.get());
    lastWritten = epochId;
    String report = report(epochId, written, (System.nanoTime() - started) / 1e9);
    while (!reports.offer(report)) {
      reports.poll();
    }
  }

  /** Write output records (kind, key, value, tombstone) to their kinds' topics with Spark's Kafka sink. */
  public void save(Dataset<Row> records) {
    Column topic = lit(null).cast("string");
    for (Map.Entry<String, String> e : topics.entrySet()) {
      topic = when(col("kind").equalTo(e.getKey()), lit(e.getValue())).otherwise(topic);
    }
    Column value = when(col("tombstone"), lit(null).cast("string")).otherwise(col("value"));
    records.select(topic.alias("topic"), col("key"), value.alias("value"))
        .write().format("kafka").options(options).mode("append").save();
  }

  private String report(long epochId, Map<String, Object> written, double seconds) {
    ObjectNode out = JSON.createObjectNode();
    out.put("batch", epochId).put("seconds", seconds);
    ObjectNode kindsOut = out.putObject("written");
    written.forEach((k, n) -> {
      if (n != null && ((Number) n).longValue() != 0) {
        kindsOut.put(k, ((Number) n).longValue());
      }
    });
    ObjectNode since = out.putObject("stats");
    if (stats != null) {
      Map<String, Long> now = stats.value();
      now.forEach((k, n) -> since.put(k, n - statsBefore.getOrDefault(k, 0L)));
      statsBefore = now;
    }
    return out.toString();
  }
}
