package io.configwatch.detect;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;

/**
 * Kafka records decoded into the rows {@code udfs.decode.decode_batches} gives: the event fields of
 * {@code udfs.schema.EVENT_SCHEMA}, the verdict (reason, detail, size_bytes; a GX failure as
 * {@code expectation:<name>}) and the source's other columns. The route stage decodes the same way
 * and routes at once; this is decode alone (the decode figure, and anyone who wants decoded rows).
 */
final class DecodeStep implements MapPartitionsFunction<Row, Row> {
  private static final long serialVersionUID = 1L;

  private final Knowledge knowledge;
  private final Keyed keyed;
  private final StructType in;
  private final StructType out;
  private final boolean validate;

  DecodeStep(Knowledge knowledge, Keyed keyed, StructType in, StructType out, boolean validate) {
    this.knowledge = knowledge;
    this.keyed = keyed;
    this.in = in;
    this.out = out;
    this.validate = validate;
  }

  @Override
  public Iterator<Row> call(Iterator<Row> rows) {
    Engine engine = Engine.get(knowledge, keyed);
    long now = System.currentTimeMillis();
    int value = in.fieldIndex("value");
    return Iterators.map(rows, r -> {
      DecodedEvent e = engine.decoder.decode((byte[]) r.get(value));
      return row(e.valid() && validate ? engine.expectations.apply(e, now) : e, r);
    });
  }

  private Row row(DecodedEvent e, Row source) {
    Object[] values = new Object[out.size()];
    List<String> names = e.names();
    for (int i = 0; i < names.size(); i++) {
      Object v = e.field(i);
      if (i == names.size() - 1) {
        v = entries(e);
      } else if (v instanceof List<?>) {
        v = e.requestPairs();
      }
      values[i] = v;
    }
    int at = names.size();
    values[at] = e.reason();
    values[at + 1] = e.detail();
    values[at + 2] = e.sizeBytes();
    at += 3;
    for (int i = 0; i < in.size(); i++) {
      if (!in.fields()[i].name().equals("value")) {
        values[at++] = source.get(i);
      }
    }
    return RowFactory.create(values);
  }

  private static Row[] entries(DecodedEvent e) {
    List<Entry> configs = e.configs();
    if (configs == null) {
      return null;
    }
    List<Row> rows = new ArrayList<>(configs.size());
    for (int i = 0; i < configs.size(); i++) {
      Entry c = configs.get(i);
      rows.add(RowFactory.create(c.key(), c.value(), c.type(), c.isDefault(), e.redactedAsSent(i), c.fingerprint()));
    }
    return rows.toArray(new Row[0]);
  }
}
