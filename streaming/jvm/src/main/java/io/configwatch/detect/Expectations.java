package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The twin of the GX suite {@code udfs.expectations.BatchValidator} (and of the row verdict
 * {@code udfs.decode.apply_expectations} makes of it): the catalog's expectations, as GX serializes
 * them, evaluated per valid event at processing time {@code now}, giving the name of the first one the
 * event fails, in the order {@code BatchValidator.validate} records failures. That order: the events
 * frame, then the entries frame (one row per configs entry; an event fails when one of its entries
 * does); within a frame, GX's result order, which is the suite's order grouped by column in order of
 * the columns' first appearance ({@code Validator.process_expectations_for_validation}). An
 * expectation GX cannot evaluate on a batch (between with no bound, or a minimum above the maximum)
 * raises inside GX, and the validator then lets its rows pass: so does this.
 *
 * <p>Evaluators exist for {@code expect_column_values_to_not_be_null}, {@code _to_be_in_set} (string
 * and int values) and {@code _to_be_between} (int bounds, literal or {@code $PARAMETER}); {@link #of}
 * refuses any other type or keyword with an IllegalArgumentException naming it.
 */
public final class Expectations implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final String NOT_NULL = "expect_column_values_to_not_be_null";
  private static final String IN_SET = "expect_column_values_to_be_in_set";
  private static final String BETWEEN = "expect_column_values_to_be_between";
  /** The entries frame's one column (BatchValidator.validate builds it from each entry's type). */
  private static final String ENTRY_COLUMN = "type";

  /** A bound: a value, or processing time plus a span (a $PARAMETER of BatchValidator.validate); null: none. */
  private record Bound(long value, boolean fromNow) implements Serializable {
    long at(long nowMs) {
      return fromNow ? nowMs + value : value;
    }
  }

  /** One expectation: its catalog name, GX type, column and arguments. */
  private record Check(String name, String type, String column, Set<Object> valueSet, Bound min, Bound max,
      boolean strictMin, boolean strictMax) implements Serializable {

    boolean fails(Object v, long nowMs) {
      switch (type) {
        case NOT_NULL:
          return v == null;
        case IN_SET:
          return v != null && valueSet != null && !valueSet.contains(v);
        default: // BETWEEN
          if (v == null || (min == null && max == null)) {
            return false;
          }
          long value = (Long) v;
          if (min != null && max != null && min.at(nowMs) > max.at(nowMs)) {
            return false; // GX: "min_value cannot be greater than max_value"; the validator lets the rows pass
          }
          if (min != null && (strictMin ? value <= min.at(nowMs) : value < min.at(nowMs))) {
            return true;
          }
          return max != null && (strictMax ? value >= max.at(nowMs) : value > max.at(nowMs));
      }
    }
  }

  private final Check[] eventChecks;
  private final Check[] entryChecks;
  private final Map<String, String> details = new HashMap<>();

  private Expectations(JsonNode s, JsonNode eventFields) {
    Map<String, String> types = new HashMap<>();
    for (JsonNode f : eventFields) {
      types.put(f.get("name").asText(), f.get("type").asText());
    }
    types.put(ENTRY_COLUMN, "str");
    List<String> frames = Knowledge.strings(s.get("frames"));
    if (frames.size() != 2) {
      throw new IllegalArgumentException("the GX suite runs on two frames, events and entries");
    }
    Set<String> eventColumns = new HashSet<>(Knowledge.strings(s.get("event_columns")));
    JsonNode parameters = s.get("parameters");
    List<Check> events = new ArrayList<>();
    List<Check> entries = new ArrayList<>();
    for (JsonNode item : s.get("suite")) {
      String name = item.get("name").asText();
      String frame = item.get("frame").asText();
      details.put(name, item.get("detail").asText());
      Check check = check(name, item.get("expectation"), parameters);
      require(!check.type().equals(BETWEEN) || "int".equals(types.get(check.column())), name,
          "no JVM evaluator for between on a column that is not int");
      if (frame.equals(frames.get(0))) {
        require(eventColumns.contains(check.column()), name, "column " + check.column() + " is not in the events frame");
        events.add(check);
      } else if (frame.equals(frames.get(1))) {
        require(check.column().equals(ENTRY_COLUMN), name, "column " + check.column() + " is not in the entries frame");
        entries.add(check);
      } else {
        throw new IllegalArgumentException("expectation " + name + " runs on an unknown frame " + frame);
      }
    }
    eventChecks = byColumn(events);
    entryChecks = byColumn(entries);
  }

  public static Expectations of(Knowledge knowledge) {
    return new Expectations(knowledge.section("expectations"), knowledge.section("decode").get("event_fields"));
  }

  private static void require(boolean ok, String name, String why) {
    if (!ok) {
      throw new IllegalArgumentException("expectation " + name + ": " + why);
    }
  }

  /** GX's result order: the suite's expectations grouped by column, columns in order of first appearance. */
  private static Check[] byColumn(List<Check> checks) {
    Map<String, List<Check>> groups = new LinkedHashMap<>();
    for (Check c : checks) {
      groups.computeIfAbsent(c.column(), k -> new ArrayList<>()).add(c);
    }
    return groups.values().stream().flatMap(List::stream).toArray(Check[]::new);
  }

  private static Check check(String name, JsonNode config, JsonNode parameters) {
    String type = config.get("type").asText();
    if (!type.equals(NOT_NULL) && !type.equals(IN_SET) && !type.equals(BETWEEN)) {
      throw new IllegalArgumentException("no JVM evaluator for the GX expectation type " + type + " (" + name + ")");
    }
    JsonNode kwargs = config.get("kwargs");
    Set<String> allowed = new HashSet<>(List.of("column", "mostly"));
    allowed.addAll(type.equals(IN_SET) ? List.of("value_set")
        : type.equals(BETWEEN) ? List.of("min_value", "max_value", "strict_min", "strict_max") : List.of());
    for (Iterator<String> it = kwargs.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      require(allowed.contains(key), name, "no JVM evaluator for " + type + " with " + key);
    }
    JsonNode column = kwargs.get("column");
    require(column != null && column.isTextual(), name, "no column");
    JsonNode mostly = kwargs.get("mostly");
    require(mostly == null || mostly.isNull() || mostly.asDouble() == 1.0, name,
        "mostly below 1 is a batch verdict, not a row's");
    Set<Object> valueSet = null;
    if (type.equals(IN_SET) && kwargs.hasNonNull("value_set")) {
      valueSet = new HashSet<>();
      for (JsonNode v : kwargs.get("value_set")) {
        if (v.isTextual()) {
          valueSet.add(v.asText());
        } else if (v.isIntegralNumber() && v.canConvertToLong()) {
          valueSet.add(v.asLong());
        } else {
          throw new IllegalArgumentException("expectation " + name + ": no JVM evaluator for value_set item " + v);
        }
      }
    }
    return new Check(name, type, column.asText(), valueSet, bound(name, kwargs.get("min_value"), parameters),
        bound(name, kwargs.get("max_value"), parameters), flag(name, kwargs.get("strict_min")),
        flag(name, kwargs.get("strict_max")));
  }

  private static boolean flag(String name, JsonNode node) {
    if (node == null || node.isNull()) {
      return false;
    }
    require(node.isBoolean(), name, "a strict flag is not a boolean");
    return node.asBoolean();
  }

  private static Bound bound(String name, JsonNode node, JsonNode parameters) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (node.isObject()) {
      JsonNode param = node.get("$PARAMETER");
      require(param != null && node.size() == 1 && param.isTextual(), name, "a bound is not a $PARAMETER");
      JsonNode def = parameters.get(param.asText());
      require(def != null, name, "no parameter " + param.asText());
      if (def.has("value")) {
        node = def.get("value");
      } else {
        JsonNode span = def.get("now_plus_ms");
        require(span != null && span.isIntegralNumber() && span.canConvertToLong(), name, "parameter "
            + param.asText() + " is not a value or now plus a span");
        return new Bound(span.asLong(), true);
      }
    }
    require(node.isIntegralNumber() && node.canConvertToLong(), name, "no JVM evaluator for bound " + node);
    return new Bound(node.asLong(), false);
  }

  /** The first failing expectation's name for one valid event at processing time nowMs, or null. */
  public String firstFailure(DecodedEvent event, long nowMs) {
    if (!event.valid()) {
      throw new IllegalArgumentException("the GX suite checks valid events only");
    }
    for (Check c : eventChecks) {
      if (c.fails(event.field(c.column()), nowMs)) {
        return c.name();
      }
    }
    List<Entry> entries = event.configs();
    if (entries != null && !entries.isEmpty()) {
      for (Check c : entryChecks) {
        for (Entry e : entries) {
          if (c.fails(e.type(), nowMs)) {
            return c.name();
          }
        }
      }
    }
    return null;
  }

  /** The catalog's sentence for expectation {@code name}; IllegalArgumentException for an unknown name. */
  public String detail(String name) {
    String detail = details.get(name);
    if (detail == null) {
      throw new IllegalArgumentException("no expectation " + name + " in the catalog");
    }
    return detail;
  }

  /**
   * udfs.decode.apply_expectations for one record: a valid event failing an expectation becomes the record
   * refused with reason {@code expectation:<name>} and the catalog's detail; anything else is returned as it is.
   */
  public DecodedEvent apply(DecodedEvent event, long nowMs) {
    if (!event.valid()) {
      return event;
    }
    String name = firstFailure(event, nowMs);
    return name == null ? event : event.refused("expectation:" + name, detail(name));
  }
}
