package io.configwatch.detect;

import java.io.Serializable;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.plans.physical.HashPartitioning;
import org.apache.spark.sql.types.DataTypes;

/**
 * The state keys of a bucketed key kind ({@code conn|}, {@code pass|}): one per bucket.
 *
 * <p>Plain labels ({@code conn|0} ... {@code conn|7}) land where Spark's hash partitioning happens to
 * put them: 5 of 8 connection buckets and 6 of 8 pass buckets in one of two shuffle partitions, so one
 * keyed task does 1.18x its share. Spread over {@code partitions}, bucket {@code i} is labelled so
 * that Spark's own partitioning of the label ({@link HashPartitioning#partitionIdExpression}) is
 * {@code i mod partitions}: the plain label if it already lands there, else the plain label plus
 * {@code .k} for the smallest such {@code k}. Which bucket a record falls in does not change (the
 * CRC-32 of its id), only the bucket's name, so the labels are part of a checkpoint's state layout
 * ({@code udfs.pipeline.StateLayout.key_partitions}).
 */
final class BucketKeys implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String[] labels;

  private BucketKeys(String[] labels) {
    this.labels = labels;
  }

  /** The keys of {@code buckets} buckets under {@code prefix}; {@code partitions <= 0}: the plain labels. */
  static BucketKeys of(String prefix, int buckets, int partitions) {
    String[] labels = new String[buckets];
    for (int i = 0; i < buckets; i++) {
      String plain = prefix + i;
      labels[i] = plain;
      if (partitions > 0) {
        for (int k = 1; partitionOf(labels[i], partitions) != i % partitions; k++) {
          labels[i] = plain + "." + k;
        }
      }
    }
    return new BucketKeys(labels);
  }

  /** The state key of the bucket {@code id} falls in (the CRC-32 of its UTF-8, as {@code udfs.gauges.bucket_of}). */
  String key(String id) {
    return labels[(int) (RouteStep.crc32(id) % labels.length)];
  }

  /** The shuffle partition Spark's hash partitioning gives {@code key} among {@code partitions}. */
  static int partitionOf(String key, int partitions) {
    List<Expression> keyExpr = List.of(Literal.create(key, DataTypes.StringType));
    HashPartitioning partitioning = new HashPartitioning(
        scala.jdk.javaapi.CollectionConverters.asScala(keyExpr).toSeq(), partitions);
    return (Integer) partitioning.partitionIdExpression().eval(null);
  }
}
