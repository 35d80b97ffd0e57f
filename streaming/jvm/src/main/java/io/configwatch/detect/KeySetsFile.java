package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * One known-key data file of {@code udfs/rules/data} as {@code udfs.rules.keysets} reads it
 * ({@code _key_set}, {@code _file_keys}, {@code _exclusive}): its family, release, roles with their
 * keys in file order, client prefixes, aliases and Java equivalents.
 */
final class KeySetsFile implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One role of the file: its keys in file order and its client prefixes (prefix to target role or any). */
  record Role(Map<String, KeySpec> keys, Map<String, String> clientPrefixes) implements Serializable {}

  final String file;
  final String family;
  final String version;
  final Map<String, Role> roles = new LinkedHashMap<>();
  final Map<String, String> aliases = new LinkedHashMap<>();
  final Map<String, String> equivalents = new LinkedHashMap<>();
  final String durations;
  final boolean singleRole;
  /** Every role's keys. */
  final Set<String> fileKeys = new HashSet<>();
  /** A key only one role knows, to that role (it reveals the role). */
  final Map<String, String> exclusive = new HashMap<>();

  KeySetsFile(String file, JsonNode doc, String defaultDurations) {
    this.file = file;
    if (doc == null || !doc.isObject()) {
      throw new IllegalArgumentException("known-key data file " + file + " is missing or not JSON");
    }
    for (String required : new String[] {"family", "version", "roles"}) {
      if (!doc.has(required)) {
        throw new IllegalArgumentException("known-key data file " + file + " lacks '" + required + "'");
      }
    }
    family = doc.get("family").asText();
    version = doc.get("version").asText();
    doc.get("roles").fields().forEachRemaining(r -> {
      Map<String, KeySpec> keys = new LinkedHashMap<>();
      r.getValue().get("keys").fields().forEachRemaining(k -> keys.put(k.getKey(), spec(k.getValue())));
      Map<String, String> prefixes = new LinkedHashMap<>();
      r.getValue().path("client_prefixes").fields()
          .forEachRemaining(p -> prefixes.put(p.getKey(), p.getValue().asText()));
      roles.put(r.getKey(), new Role(keys, prefixes));
      fileKeys.addAll(keys.keySet());
    });
    doc.path("aliases").fields().forEachRemaining(a -> aliases.put(a.getKey(), a.getValue().asText()));
    doc.path("java_equivalents").fields().forEachRemaining(a -> equivalents.put(a.getKey(), a.getValue().asText()));
    JsonNode d = doc.get("durations");
    durations = d == null ? defaultDurations : KeySets.pyStr(d);
    singleRole = truthy(doc.get("single_role"));
    for (Map.Entry<String, Role> role : roles.entrySet()) {
      for (String key : role.getValue().keys().keySet()) {
        boolean others = false;
        for (Map.Entry<String, Role> other : roles.entrySet()) {
          others |= !other.getKey().equals(role.getKey()) && other.getValue().keys().containsKey(key);
        }
        if (!others) {
          exclusive.put(key, role.getKey());
        }
      }
    }
  }

  private static KeySpec spec(JsonNode v) {
    JsonNode d = v.get("default");
    return new KeySpec(v.get("type").asText(), d == null || d.isNull() ? null : d.asText(), truthy(v.get("required")));
  }

  /** Python's truth value of a JSON value. */
  static boolean truthy(JsonNode v) {
    if (v == null || v.isNull()) {
      return false;
    }
    if (v.isBoolean()) {
      return v.asBoolean();
    }
    if (v.isNumber()) {
      return v.asDouble() != 0;
    }
    if (v.isTextual()) {
      return !v.asText().isEmpty();
    }
    return v.size() > 0;
  }
}
