package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The stateless anomaly rules: the twin of {@code udfs.rules.anomalies.evaluate} for one push. The
 * rules, their order and messages, thresholds and words come from the spec; each rule's predicate
 * (over {@link Effective}, judged like each client judges) is written here, in {@link AnomaliesRules}.
 * A finding names the catalog's keys (the classic-key rule only those set explicitly), shows their
 * values ({@link AnomaliesShown}) and which of them were defaulted.
 */
public final class Anomalies implements Serializable {
  private static final long serialVersionUID = 1L;

  private record Rule(String id, String message, List<String> keys) implements Serializable {}

  private final List<Rule> rules = new ArrayList<>();
  private final AnomaliesRules predicates;
  private final AnomaliesShown shown;

  private Anomalies(Knowledge knowledge) {
    JsonNode section = knowledge.section("anomalies");
    predicates = new AnomaliesRules(section);
    shown = new AnomaliesShown(knowledge);
    for (JsonNode r : section.get("rules")) {
      String id = r.get("id").asText();
      predicates.of(id); // fails now for a rule without a predicate here
      rules.add(new Rule(id, r.get("message").asText(), knowledge.rule(id).keys()));
    }
    EffectiveRules effective = new EffectiveRules(knowledge);
    for (Rule rule : rules) {
      for (String key : rule.keys()) {
        if (effective.columnOf(key) < 0) {
          throw new IllegalArgumentException(rule.id() + " names " + key + ", not a rule key");
        }
      }
    }
    for (String key : AnomaliesRules.KEYS_READ) {
      if (effective.columnOf(key) < 0) {
        throw new IllegalArgumentException("the anomaly rules read " + key + ", not a rule key");
      }
    }
  }

  public static Anomalies of(Knowledge knowledge) {
    return new Anomalies(knowledge);
  }

  /** {@code evaluate}'s rows for this push (without the row), in rule order. */
  public List<RawFinding> evaluate(Effective e) {
    List<RawFinding> out = new ArrayList<>(2);
    for (Rule rule : rules) {
      Predicate<Effective> predicate = predicates.of(rule.id());
      if (!predicate.test(e)) {
        continue;
      }
      List<String> keys = new ArrayList<>(rule.keys().size());
      for (String k : rule.keys()) {
        if (AnomaliesRules.ALWAYS_NAMED.contains(k) || !rule.id().equals(AnomaliesRules.PROTOCOL_RULE)
            || e.explicit(k)) {
          keys.add(k);
        }
      }
      Map<String, Object> values = new LinkedHashMap<>();
      List<String> defaulted = new ArrayList<>();
      for (String k : keys) {
        values.put(k, shown.shown(e.value(k), k, e.isString(k)));
        if (!e.sent(k)) {
          defaulted.add(k);
        }
      }
      defaulted.sort(PyJson::compareCodePoints);
      List<String> sorted = new ArrayList<>(keys);
      sorted.sort(PyJson::compareCodePoints);
      Map<String, Object> evidence = new LinkedHashMap<>();
      evidence.put("values", values);
      evidence.put("defaulted", defaulted);
      out.add(new RawFinding(rule.id(), List.copyOf(sorted), shown.fill(rule.message(), values) + ".", evidence));
    }
    return out;
  }

  /** The rule ids in order. */
  List<String> ids() {
    return rules.stream().map(Rule::id).toList();
  }
}
