package io.configwatch.floor;

import static org.apache.spark.sql.functions.col;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The latency floor of the job's engine (bench/floor.py): the smallest query of the job's shape on
 * the JVM, a keyed {@code transformWithState} with one counter per key that passes every row on, as
 * the Python floor does with {@code transformWithStateInPandas}. Not used by the job.
 */
public final class Floor {
  private Floor() {}

  static final StructType OUT = new StructType().add("key", DataTypes.StringType).add("value", DataTypes.StringType);

  /** Per key {@code k} (long): every row's {@code ts} (long) out as (key, value) text, a counter kept. */
  public static Dataset<Row> keyed(Dataset<Row> rows) {
    return rows.groupBy(col("k")).as(Encoders.LONG(), Encoders.row(rows.schema()))
        .transformWithState(new Count(rows.schema().fieldIndex("ts")), TimeMode.None(), OutputMode.Append(),
            Encoders.row(OUT));
  }

  static final class Count extends StatefulProcessor<Long, Row, Row> {
    private static final long serialVersionUID = 1L;
    private final int ts;
    private transient ValueState<Long> n;

    Count(int ts) {
      this.ts = ts;
    }

    @Override
    public void init(OutputMode outputMode, TimeMode timeMode) {
      n = getHandle().getValueState("n", Encoders.LONG(), TTLConfig.NONE());
    }

    @Override
    public scala.collection.Iterator<Row> handleInputRows(Long key, scala.collection.Iterator<Row> rows,
        TimerValues timers) {
      List<Row> out = new ArrayList<>();
      while (rows.hasNext()) {
        out.add(RowFactory.create(String.valueOf(key), String.valueOf(rows.next().getLong(ts))));
      }
      n.update((n.exists() ? n.get() : 0L) + out.size());
      return CollectionConverters.asScala(out.iterator());
    }
  }
}
