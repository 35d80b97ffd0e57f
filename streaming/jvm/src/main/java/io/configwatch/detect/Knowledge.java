package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.TextNode;
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
  private transient volatile Map<String, String> texts; // every string of the spec, to itself (interned)

  private static volatile Knowledge latest; // the spec this JVM read last, parsed: shared by every plan and task

  private Knowledge(String json) {
    this.json = json;
    doc();
  }

  /** The knowledge in {@code json} (the instance read before, if the text is the same); IllegalArgumentException
   * when it is not a spec. */
  public static Knowledge parse(String json) {
    Knowledge known = latest;
    if (known != null && known.json.equals(json)) {
      return known;
    }
    Knowledge read = new Knowledge(json);
    latest = read;
    return read;
  }

  /** Spark ships the text to every task: each resolves to this JVM's instance, so the spec is parsed once per JVM,
   * not once per task. */
  private Object readResolve() {
    return parse(json);
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
        parsed = new ObjectMapper().setNodeFactory(INTERNED).readTree(json);
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

  /**
   * The spec's own instance of {@code text} when the spec holds that text (a config key, a field or type name),
   * else {@code text}. The spec's strings are interned, field names by Jackson and values by {@link #INTERNED}, so
   * the rules' maps, Java's literals and the decoder's strings ({@link Decoder}) share instances, and a map lookup
   * of a record's key ends at {@code ==} instead of comparing the bytes.
   */
  String canonical(String text) {
    Map<String, String> known = texts;
    if (known == null) {
      known = readTexts();
    }
    return known.getOrDefault(text, text);
  }

  private synchronized Map<String, String> readTexts() {
    if (texts == null) {
      Map<String, String> known = new HashMap<>();
      collect(doc(), known);
      texts = known;
    }
    return texts;
  }

  private static void collect(JsonNode node, Map<String, String> known) {
    if (node.isTextual()) {
      known.putIfAbsent(node.asText(), node.asText());
    }
    node.fieldNames().forEachRemaining(name -> known.putIfAbsent(name, name.intern()));
    node.forEach(child -> collect(child, known));
  }

  /** Text nodes with interned text (see {@link #canonical}). */
  private static final JsonNodeFactory INTERNED = new JsonNodeFactory() {
    private static final long serialVersionUID = 1L;

    @Override
    public TextNode textNode(String text) {
      return super.textNode(text == null ? null : text.intern());
    }
  };

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
