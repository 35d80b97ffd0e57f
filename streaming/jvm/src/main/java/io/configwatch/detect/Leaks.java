package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Sensitive-leak findings of one push: the twin of {@code udfs.rules.leaks.leak_findings}. Flagged
 * entries come in the Python order (KIP criteria, policy redactions, secrets in values, secrets in
 * keys, each in entry order); one finding per rule names its sorted distinct keys and lists every
 * flagged entry with the fingerprint of its value (or key), never the value. Then one finding for
 * secrets in the event's identity fields.
 */
final class Leaks {
  private final Knowledge knowledge;
  private final int keysShown;
  private final String moreKeys;
  private final String identityMessage;
  private final Map<String, String> identityKeys = new LinkedHashMap<>();
  private final String redactedRule;
  private final String identityRule;

  Leaks(Knowledge knowledge) {
    this.knowledge = knowledge;
    JsonNode section = knowledge.section("prepare");
    keysShown = section.get("keys_shown").asInt();
    moreKeys = section.get("more_keys").asText();
    identityMessage = section.get("identity_message").asText();
    section.get("identity_keys").fields().forEachRemaining(e -> identityKeys.put(e.getKey(), e.getValue().asText()));
    redactedRule = section.get("redacted_rule").asText();
    identityRule = section.get("identity_rule").asText();
  }

  /** One flagged entry: its rule, what the finding shows of it, where the secret was. */
  private record Flag(String rule, String key, String type, String location, String fingerprint) {}

  /** One secret in an identity field: the field, the kind found, the fingerprint. */
  record IdentityHit(String field, String kind, String fingerprint) {}

  /**
   * The findings of one push. Per entry: {@code kip} the KIP rule that makes it sensitive (custom
   * included), {@code valueSecret} the secret kind in its value, {@code keySecret} in its key.
   */
  List<RawFinding> findings(Detector.View view, String[] kip, String[] valueSecret, Keyed keyed) {
    List<Entry> entries = view.entries();
    List<Flag> flags = new ArrayList<>();
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      if (published(e) && kip[i] != null) {
        flags.add(new Flag(kip[i], view.safeKey(i), e.type(), "value", keyed.fingerprint(e.value())));
      }
    }
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      if (e.redacted()) {
        flags.add(new Flag(redactedRule, view.safeKey(i), e.type(), "value", e.fingerprint()));
      }
    }
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      if (published(e) && valueSecret[i] != null) {
        flags.add(new Flag(valueSecret[i], view.safeKey(i), e.type(), "value", keyed.fingerprint(e.value())));
      }
    }
    for (int i = 0; i < entries.size(); i++) {
      if (view.keySecret(i) != null) {
        Entry e = entries.get(i);
        flags.add(new Flag(view.keySecret(i), view.safeKey(i), e.type(), "key", keyed.fingerprint(e.key())));
      }
    }
    // stable sort by rule (pandas sort_values(kind="stable") on the one push's rows)
    Map<String, List<Flag>> byRule = new TreeMap<>(PyJson::compareCodePoints);
    for (Flag f : flags) {
      byRule.computeIfAbsent(f.rule(), r -> new ArrayList<>()).add(f);
    }
    List<RawFinding> out = new ArrayList<>(byRule.size() + 1);
    for (Map.Entry<String, List<Flag>> group : byRule.entrySet()) {
      out.add(finding(group.getKey(), group.getValue()));
    }
    if (!view.identityHits().isEmpty()) {
      out.add(identityFinding(view.identityHits()));
    }
    return out;
  }

  private static boolean published(Entry e) {
    return e.value() != null && !e.redacted();
  }

  private RawFinding finding(String rule, List<Flag> flags) {
    TreeSet<String> distinct = new TreeSet<>(PyJson::compareCodePoints);
    List<Object> shownEntries = new ArrayList<>(flags.size());
    for (Flag f : flags) {
      distinct.add(f.key());
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put("key", f.key());
      if (f.type() != null) {
        entry.put("type", f.type());
      }
      entry.put("location", f.location());
      if (f.fingerprint() != null) {
        entry.put("fingerprint", f.fingerprint());
      }
      shownEntries.add(entry);
    }
    List<String> keys = List.copyOf(distinct);
    StringBuilder shown = new StringBuilder(String.join(", ", keys.subList(0, Math.min(keysShown, keys.size()))));
    if (keys.size() > keysShown) {
      shown.append(moreKeys.replace("{more}", Integer.toString(keys.size() - keysShown)));
    }
    String rationale = knowledge.rule(rule).rationale();
    while (rationale.endsWith(".")) {
      rationale = rationale.substring(0, rationale.length() - 1);
    }
    Map<String, Object> evidence = new LinkedHashMap<>();
    evidence.put("entries", shownEntries);
    return new RawFinding(rule, keys, rationale + ": " + shown + ".", evidence);
  }

  private RawFinding identityFinding(List<IdentityHit> hits) {
    TreeSet<String> names = new TreeSet<>(PyJson::compareCodePoints);
    TreeSet<String> keys = new TreeSet<>(PyJson::compareCodePoints);
    List<Object> fields = new ArrayList<>(hits.size());
    for (IdentityHit h : hits) {
      names.add(h.field());
      keys.add(identityKeys.getOrDefault(h.field(), h.field()));
      Map<String, Object> field = new LinkedHashMap<>();
      field.put("field", h.field());
      field.put("kind", h.kind());
      field.put("fingerprint", h.fingerprint());
      fields.add(field);
    }
    Map<String, Object> evidence = new LinkedHashMap<>();
    evidence.put("fields", fields);
    return new RawFinding(identityRule, List.copyOf(keys),
        identityMessage.replace("{fields}", String.join(", ", names)), evidence);
  }
}
