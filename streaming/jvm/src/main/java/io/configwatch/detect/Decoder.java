package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The twin of {@code udfs.classify.parse_record} and {@code configwatch.records.validate_event}
 * (with {@code _check_type}), shaping valid events as {@code udfs.decode._slow_rows} does: one raw
 * record gives its parsed event or its quarantine reason and detail, the same as Python's
 * {@code ContractError.reason} and {@code .detail}. Reading the bytes is {@link DecoderJson}'s. An
 * instance serves one thread at a time (it keeps a table of short strings already made).
 */
public final class Decoder implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int MAX_SOFTWARE_CHECKED = 4096; // validSoftware's answers kept (all dropped when full)
  /** The fields of {@link Entry}, in its order: the contract's entry fields must be these. */
  private static final List<String> ENTRY_RECORD = List.of("key", "value", "type", "is_default", "redacted",
      "fingerprint");
  private static final String SCHEMA_VERSION = "schema_version";
  private static final String EVENT = "event";
  private static final String[] SOFTWARE = {"client_software_name", "client_software_version"};

  /** A contract field (configwatch.contract.FieldSpec): its name, Python JSON type, whether required, its items. */
  record Field(String name, String pyType, boolean required, Field[] items) implements Serializable {}

  /** A refused record: reason and detail, as ContractError carries them. */
  private static final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;
    final String reason;
    final String detail;

    Refusal(String reason, String detail) {
      super(reason, null, false, false);
      this.reason = reason;
      this.detail = detail;
    }
  }

  private final Map<String, String[]> verdicts = new java.util.HashMap<>(); // name -> reason, detail templates
  private final long schemaVersion;
  private final Set<String> eventTypes;
  private final String eventTypesText;
  private final String configPush;
  private final Set<String> configTypes;
  private final Pattern software;
  private final int softwareMaxChars;
  private final Field[] eventFields;
  private final Field[] entryFields;
  private final DecodedEvent.Layout layout;
  private final int maxNesting;
  private final int maxIntDigits;
  private final Knowledge knowledge; // its strings: the decoder hands out the spec's instances (Knowledge.canonical)
  private transient DecoderText.Strings strings;
  private transient Map<String, Boolean> softwareChecked; // validSoftware's answers: names and versions repeat

  private Decoder(Knowledge knowledge, JsonNode s) {
    this.knowledge = knowledge;
    s.get("verdicts").fields().forEachRemaining(e -> verdicts.put(e.getKey(),
        new String[] {e.getValue().get("reason").asText(), e.getValue().get("detail").asText()}));
    schemaVersion = s.get("schema_version").asLong();
    List<String> types = Knowledge.strings(s.get("event_types"));
    eventTypes = new HashSet<>(types);
    eventTypesText = String.join(", ", types);
    configPush = s.get("config_push").asText();
    configTypes = new HashSet<>(Knowledge.strings(s.get("config_types")));
    if (s.get("software_pattern_flags").asInt() != 32) { // re.UNICODE alone: the pattern means the same in Java
      throw new IllegalArgumentException("the software pattern has flags Java does not mirror");
    }
    software = Pattern.compile(s.get("software_pattern").asText());
    softwareMaxChars = s.get("software_max_chars").asInt();
    eventFields = fields(s.get("event_fields"));
    entryFields = fields(s.get("entry_fields"));
    maxNesting = s.get("max_nesting").asInt();
    maxIntDigits = s.get("int_max_str_digits").asInt();
    List<String> names = new ArrayList<>();
    Field listField = null;
    for (Field f : eventFields) {
      names.add(f.name());
      if (f.items() != null) {
        if (listField != null || f.items().length != 2 || !f.items()[0].pyType().equals("int")
            || !f.items()[1].pyType().equals("int")) {
          throw new IllegalArgumentException("the event's list fields are not request_versions' pairs");
        }
        listField = f;
      }
    }
    names.add("configs");
    if (!names.equals(Knowledge.strings(s.get("event_schema")))
        || !ENTRY_RECORD.equals(Knowledge.strings(s.get("entry_names")))) {
      throw new IllegalArgumentException("the decoded schema is not the contract's fields");
    }
    layout = new DecodedEvent.Layout(names, listField == null ? null : listField.name(),
        listField == null ? List.of() : List.of(listField.items()[0].name(), listField.items()[1].name()));
  }

  private static Field[] fields(JsonNode array) {
    Field[] out = new Field[array.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode f = array.get(i);
      String type = f.get("type").asText();
      if (!List.of("int", "str", "bool", "list").contains(type)) {
        throw new IllegalArgumentException("no JVM check for contract type " + type);
      }
      JsonNode items = f.get("items");
      out[i] = new Field(f.get("name").asText(), type, f.get("required").asBoolean(),
          items == null || items.isNull() ? null : fields(items));
    }
    return out;
  }

  public static Decoder of(Knowledge knowledge) {
    return new Decoder(knowledge, knowledge.section("decode"));
  }

  /** parse_record + validate_event of one raw record (null: the record has no value). */
  public DecodedEvent decode(byte[] raw) {
    if (raw == null) {
      return invalid("no_value", 0);
    }
    long size = raw.length;
    if (!DecoderText.isUtf8(raw)) {
      return invalid("not_utf8", size);
    }
    if (strings == null) {
      strings = new DecoderText.Strings(knowledge::canonical);
      softwareChecked = new HashMap<>();
    }
    DecoderJson.Reader reader = new DecoderJson.Reader(raw, maxNesting, maxIntDigits, strings);
    Object doc;
    try {
      doc = reader.document();
    } catch (DecoderJson.Failure f) {
      return invalid(f.deep ? "too_deep" : "not_json", size);
    }
    if (reader.lone && DecoderText.hasLoneSurrogate(doc)) {
      return invalid("lone_surrogate", size);
    }
    try {
      validate(doc);
    } catch (Refusal r) {
      return layout.invalid(r.reason, r.detail, size);
    }
    return row(asMap(doc), size);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> asMap(Object value) {
    return (Map<String, Object>) value;
  }

  /** Python's type(value).__name__ of a parsed value. */
  private static String pyType(Object value) {
    if (value instanceof String) {
      return "str";
    }
    if (value instanceof Long) {
      return "int";
    }
    if (value instanceof Boolean) {
      return "bool";
    }
    if (value instanceof List) {
      return "list";
    }
    if (value instanceof Map) {
      return "dict";
    }
    return ((DecoderJson.Marker) value).pyType();
  }

  private static boolean isType(Object value, String type) {
    return switch (type) {
      case "int" -> value instanceof Long || value == DecoderJson.BIG_INT;
      case "str" -> value instanceof String;
      case "bool" -> value instanceof Boolean;
      default -> value instanceof List;
    };
  }

  /** The verdict {@code name} of configwatch.verdicts with its named parts filled (str.format's {part}). */
  private Refusal refusal(String name, String... parts) {
    String[] templates = verdicts.get(name);
    if (templates == null) {
      throw new IllegalStateException("the spec has no verdict " + name);
    }
    return new Refusal(fill(templates[0], parts), fill(templates[1], parts));
  }

  private DecodedEvent invalid(String name, long size) {
    Refusal r = refusal(name);
    return layout.invalid(r.reason, r.detail, size);
  }

  private static String fill(String template, String... parts) {
    String out = template;
    for (int i = 0; i + 1 < parts.length; i += 2) {
      out = out.replace("{" + parts[i] + "}", parts[i + 1]);
    }
    return out;
  }

  /** configwatch.records._check_type. */
  private void checkType(Map<String, Object> obj, Field spec, String where) throws Refusal {
    Object value = obj.get(spec.name());
    if (value == null) {
      if (spec.required()) {
        throw refusal("missing_field", "field", where + spec.name());
      }
      return;
    }
    if (!isType(value, spec.pyType())) {
      throw refusal("wrong_type", "field", where + spec.name(), "expected", spec.pyType(), "got", pyType(value));
    }
    if (value == DecoderJson.BIG_INT) {
      throw refusal("out_of_range", "field", where + spec.name());
    }
    if (spec.items() != null && value instanceof List<?> list) {
      String inner = where + spec.name() + "[].";
      for (Object item : list) {
        if (!(item instanceof Map)) {
          throw refusal("item_not_object", "field", where + spec.name());
        }
        for (Field itemSpec : spec.items()) {
          checkType(asMap(item), itemSpec, inner);
        }
      }
    }
  }

  /** configwatch.records.validate_event. */
  private void validate(Object doc) throws Refusal {
    if (!(doc instanceof Map)) {
      throw refusal("not_object");
    }
    Map<String, Object> obj = asMap(doc);
    for (Field spec : eventFields) {
      if (spec.name().equals(SCHEMA_VERSION) || spec.name().equals(EVENT)) {
        checkType(obj, spec, "");
      }
    }
    if ((Long) obj.get(SCHEMA_VERSION) != schemaVersion) {
      throw refusal("bad_schema_version", "version", Long.toString(schemaVersion));
    }
    if (!eventTypes.contains((String) obj.get(EVENT))) {
      throw refusal("unknown_event", "events", eventTypesText);
    }
    for (Field spec : eventFields) {
      checkType(obj, spec, "");
    }
    for (String name : SOFTWARE) {
      String value = (String) obj.get(name);
      if (value != null && !value.isEmpty() && !validSoftware(value)) {
        throw refusal("bad_software", "part", name.substring(name.lastIndexOf('_') + 1), "field", name);
      }
    }
    if (configPush.equals(obj.get(EVENT))) {
      Object configs = obj.get("configs");
      if (configs == null) {
        throw refusal("missing_configs");
      }
      if (!(configs instanceof List<?> entries)) {
        throw refusal("configs_not_array");
      }
      for (Object entry : entries) {
        if (!(entry instanceof Map)) {
          throw refusal("entry_not_object");
        }
        Map<String, Object> e = asMap(entry);
        if (e.get("key") == null) {
          throw refusal("entry_without_key");
        }
        for (Field spec : entryFields) {
          checkType(e, spec, "configs[].");
        }
        if (!configTypes.contains((String) e.get("type"))) {
          throw refusal("bad_config_type");
        }
      }
    } else if (obj.get("connection_id") == null) {
      throw refusal("missing_connection");
    }
  }

  /** configwatch.contract.is_valid_software: at most software_max_chars code points, the whole string matching. */
  private boolean validSoftware(String value) {
    Boolean known = softwareChecked.get(value);
    if (known == null) {
      if (softwareChecked.size() >= MAX_SOFTWARE_CHECKED) {
        softwareChecked.clear();
      }
      known = value.codePointCount(0, value.length()) <= softwareMaxChars && software.matcher(value).matches();
      softwareChecked.put(value, known);
    }
    return known;
  }

  /** udfs.decode._slow_rows: the event fields in contract order, list items and entries with their fields only. */
  private DecodedEvent row(Map<String, Object> obj, long size) {
    Object[] values = new Object[eventFields.length];
    for (int i = 0; i < eventFields.length; i++) {
      Field f = eventFields[i];
      Object value = obj.get(f.name());
      if (f.items() != null && value != null) {
        List<?> items = (List<?>) value;
        List<DecodedEvent.RequestVersion> pairs = new ArrayList<>(items.size());
        for (Object item : items) {
          Map<String, Object> m = asMap(item);
          pairs.add(new DecodedEvent.RequestVersion((Long) m.get(f.items()[0].name()),
              (Long) m.get(f.items()[1].name())));
        }
        value = List.copyOf(pairs);
      }
      values[i] = value;
    }
    List<Entry> configs = null;
    Boolean[] redacted = null;
    if (configPush.equals(obj.get(EVENT))) {
      List<?> entries = (List<?>) obj.get("configs");
      List<Entry> out = new ArrayList<>(entries.size());
      redacted = new Boolean[entries.size()];
      int i = 0;
      for (Object item : entries) {
        Map<String, Object> e = asMap(item);
        Boolean r = (Boolean) e.get("redacted");
        redacted[i++] = r;
        out.add(new Entry((String) e.get("key"), (String) e.get("value"), (String) e.get("type"),
            (Boolean) e.get("is_default"), r != null && r, (String) e.get("fingerprint")));
      }
      configs = java.util.Collections.unmodifiableList(out);
    }
    return new DecodedEvent(layout, null, null, size, values, configs, redacted);
  }
}
