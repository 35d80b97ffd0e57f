package io.configwatch.detect;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/**
 * The verdict on one raw record, one row of {@code udfs.decode.decode_values}: valid (reason null,
 * the event's fields as the row of {@code udfs.schema.EVENT_SCHEMA} holds them) or not (reason and
 * detail, no fields). {@code size_bytes} is the record's length (0 without a value).
 */
public final class DecodedEvent implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One {@code request_versions} element: a request (API key, version) the client sent. */
  public record RequestVersion(long apiKey, long version) implements Serializable {}

  /** The decoded row's shape: EVENT_SCHEMA's names (the event fields, then configs), shared by all events. */
  static final class Layout implements Serializable {
    private static final long serialVersionUID = 1L;
    final List<String> names;
    final Map<String, Integer> index = new HashMap<>();
    final String listField;
    final List<String> itemNames;

    Layout(List<String> names, String listField, List<String> itemNames) {
      this.names = List.copyOf(names);
      for (int i = 0; i < names.size() - 1; i++) {
        index.put(names.get(i), i);
      }
      this.listField = listField;
      this.itemNames = itemNames;
    }

    DecodedEvent invalid(String reason, String detail, long size) {
      return new DecodedEvent(this, reason, detail, size, null, null, null);
    }
  }

  private final Layout layout;
  private final String reason;
  private final String detail;
  private final long sizeBytes;
  private final Object[] values;
  private final List<Entry> configs;
  private final Boolean[] redacted;

  DecodedEvent(Layout layout, String reason, String detail, long sizeBytes, Object[] values, List<Entry> configs,
      Boolean[] redacted) {
    this.layout = layout;
    this.reason = reason;
    this.detail = detail;
    this.sizeBytes = sizeBytes;
    this.values = values;
    this.configs = configs;
    this.redacted = redacted;
  }

  /** This record refused with {@code reason} and {@code detail} (an expectation's): no fields, same size. */
  public DecodedEvent refused(String reason, String detail) {
    return layout.invalid(reason, detail, sizeBytes);
  }

  /** The quarantine reason, or null for a valid event. */
  public String reason() {
    return reason;
  }

  public String detail() {
    return detail;
  }

  public long sizeBytes() {
    return sizeBytes;
  }

  public boolean valid() {
    return reason == null;
  }

  /** EVENT_SCHEMA's column names: the event fields in contract order, then {@code configs}. */
  public List<String> names() {
    return layout.names;
  }

  /**
   * An event field: Long, String, {@code List<RequestVersion>} (request_versions) or null (absent, or an
   * invalid record); {@code configs} gives {@link #configs()}. IllegalArgumentException for other names.
   */
  public Object field(String name) {
    Integer i = layout.index.get(name);
    if (i == null) {
      if (name.equals(layout.names.get(layout.names.size() - 1))) {
        return configs;
      }
      throw new IllegalArgumentException("no event field " + name);
    }
    return values == null ? null : values[i];
  }

  /** The field at {@code i} of EVENT_SCHEMA's order (configs last). */
  public Object field(int i) {
    if (i == layout.names.size() - 1) {
      return configs;
    }
    return values == null ? null : values[i];
  }

  /** The entries of a config_push (null for other events and invalid records), in request order. */
  public List<Entry> configs() {
    return configs;
  }

  /** The {@code redacted} of entry {@code i} as sent: null when absent ({@link Entry#redacted()} reads false). */
  public Boolean redactedAsSent(int i) {
    return redacted[i];
  }

  @SuppressWarnings("unchecked")
  public List<RequestVersion> requestVersions() {
    return layout.listField == null ? null : (List<RequestVersion>) field(layout.listField);
  }

  /**
   * request_versions as Spark rows (api_key, version), the external form Spark 4's row encoder takes for
   * a list of structs (an array: it refuses a java.util.List); null when the event carries none.
   */
  public Row[] requestPairs() {
    List<RequestVersion> pairs = requestVersions();
    if (pairs == null) {
      return null;
    }
    Row[] rows = new Row[pairs.size()];
    for (int i = 0; i < rows.length; i++) {
      rows[i] = RowFactory.create(pairs.get(i).apiKey(), pairs.get(i).version());
    }
    return rows;
  }

  public String event() {
    return (String) field("event");
  }

  public Long timestampMs() {
    return (Long) field("timestamp_ms");
  }

  /** The event as the rules read a push (null unless a valid config_push). */
  public Push push() {
    if (configs == null) {
      return null;
    }
    return new Push((String) field("client_instance_id"), (String) field("client_software_name"),
        (String) field("client_software_version"), (String) field("client_id"), (String) field("principal"),
        (String) field("client_address"), (String) field("connection_id"), timestampMs(), configs);
  }

  /** The decoded row as {@code Table.to_pylist()} gives it (EVENT_SCHEMA order; null for an invalid record). */
  public Map<String, Object> row() {
    if (values == null) {
      return null;
    }
    Map<String, Object> row = new LinkedHashMap<>();
    for (int i = 0; i < values.length; i++) {
      Object v = values[i];
      if (v instanceof List<?> pairs) {
        List<Object> items = new ArrayList<>(pairs.size());
        for (Object p : pairs) {
          RequestVersion rv = (RequestVersion) p;
          Map<String, Object> item = new LinkedHashMap<>();
          item.put(layout.itemNames.get(0), rv.apiKey());
          item.put(layout.itemNames.get(1), rv.version());
          items.add(item);
        }
        v = items;
      }
      row.put(layout.names.get(i), v);
    }
    List<Object> entries = null;
    if (configs != null) {
      entries = new ArrayList<>(configs.size());
      for (int i = 0; i < configs.size(); i++) {
        Entry e = configs.get(i);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key", e.key());
        m.put("value", e.value());
        m.put("type", e.type());
        m.put("is_default", e.isDefault());
        m.put("redacted", redacted[i]);
        m.put("fingerprint", e.fingerprint());
        entries.add(m);
      }
    }
    row.put(layout.names.get(layout.names.size() - 1), entries);
    return row;
  }
}
