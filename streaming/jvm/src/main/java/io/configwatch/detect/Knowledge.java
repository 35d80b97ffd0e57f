package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything the detection engine knows, read once from one JSON document that Python builds from
 * the facts' own homes ({@code streaming.jvm_spec.spec}): the rule catalog, the contract's names,
 * the key-set and defaults data files, and each rule module's words, patterns and thresholds (one
 * section per module). The Java classes hold the logic only; no fact is written twice. The document
 * holds no config value and no key.
 */
public final class Knowledge implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One catalog entry: what a finding of this rule carries. */
  public record Rule(String id, String kind, String severity, List<String> keys, String rationale)
      implements Serializable {}

  private final String json;
  private transient volatile JsonNode doc; // read once, then shared by the task's threads
  private transient volatile Map<String, Rule> rules;

  private Knowledge(String json) {
    this.json = json;
    doc();
  }

  /** The knowledge in {@code json}; IllegalArgumentException when it is not a spec. */
  public static Knowledge parse(String json) {
    return new Knowledge(json);
  }

  /** A digest of the spec's text: two equal specs share their engines ({@code Engine}). */
  public String digest() {
    return Integer.toHexString(json.hashCode()) + ":" + json.length();
  }

  /** The spec's text (what Spark ships to executors). */
  public String json() {
    return json;
  }

  private JsonNode doc() {
    JsonNode read = doc;
    return read != null ? read : readDoc();
  }

  private synchronized JsonNode readDoc() {
    if (doc == null) {
      JsonNode parsed;
      try {
        parsed = new ObjectMapper().readTree(json);
      } catch (IOException e) {
        throw new IllegalArgumentException("not a configwatch detection spec: " + e.getMessage(), e);
      }
      if (parsed == null || !parsed.isObject() || !parsed.has("catalog")) {
        throw new IllegalArgumentException("not a configwatch detection spec: no catalog");
      }
      doc = parsed;
    }
    return doc;
  }

  /** One module's section ({@code secretscan}, {@code keysets}, ...); IllegalArgumentException if absent. */
  public JsonNode section(String name) {
    JsonNode node = doc().get(name);
    if (node == null || node.isNull()) {
      throw new IllegalArgumentException("the detection spec has no section " + name);
    }
    return node;
  }

  /** The catalog entry of {@code id}; IllegalArgumentException when the catalog has none. */
  public Rule rule(String id) {
    Map<String, Rule> byId = rules;
    if (byId == null) {
      byId = readRules();
    }
    Rule rule = byId.get(id);
    if (rule == null) {
      throw new IllegalArgumentException("no rule " + id + " in the catalog");
    }
    return rule;
  }

  private synchronized Map<String, Rule> readRules() {
    if (rules == null) {
      Map<String, Rule> byId = new HashMap<>();
      for (JsonNode r : section("catalog")) {
        byId.put(r.get("id").asText(), new Rule(r.get("id").asText(), r.get("kind").asText(),
            r.get("severity").asText(), strings(r.get("keys")), r.get("rationale").asText()));
      }
      rules = byId;
    }
    return rules;
  }

  /** The strings of a JSON array (an empty list for null or a missing node). */
  public static List<String> strings(JsonNode array) {
    if (array == null || array.isNull()) {
      return List.of();
    }
    List<String> out = new ArrayList<>(array.size());
    for (JsonNode item : array) {
      out.add(item.isNull() ? null : item.asText());
    }
    return Collections.unmodifiableList(out);
  }
}
