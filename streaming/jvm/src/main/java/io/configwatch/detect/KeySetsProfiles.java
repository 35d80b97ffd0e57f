package io.configwatch.detect;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * {@code udfs.rules.keysets.profile} and {@code _with_release_defaults}: one data file narrowed to one
 * role at one release. The unknown role is the union of the roles, a key's default kept only where
 * every role agrees; Streams also takes every client config unprefixed and its clients' release
 * defaults for the keys it does not define itself.
 */
final class KeySetsProfiles {
  private KeySetsProfiles() {}

  private static final List<String> CLIENTS = List.of("producer", "consumer", "admin");
  private static final List<String> STREAMS_LAYERS = List.of("producer", "consumer", "admin", "streams");
  private static final String STREAMS = "streams";

  static Profile build(KeySets sets, KeySetsFile doc, String role, String release) {
    Map<String, KeySpec> keys;
    Map<String, Set<String>> prefixes = new LinkedHashMap<>();
    if (role.equals(sets.unknownRole())) {
      Map<String, KeySpec> merged = new LinkedHashMap<>();
      Set<String> disagree = new HashSet<>();
      for (KeySetsFile.Role body : doc.roles.values()) {
        for (Map.Entry<String, KeySpec> e : body.keys().entrySet()) {
          KeySpec first = merged.get(e.getKey());
          if (first != null && !Objects.equals(first.defaultValue(), e.getValue().defaultValue())) {
            disagree.add(e.getKey());
          }
          merged.putIfAbsent(e.getKey(), e.getValue());
        }
      }
      keys = new LinkedHashMap<>();
      for (Map.Entry<String, KeySpec> e : merged.entrySet()) {
        KeySpec s = e.getValue();
        keys.put(e.getKey(), disagree.contains(e.getKey()) ? new KeySpec(s.type(), null, false) : s);
      }
    } else if (doc.roles.containsKey(role)) {
      KeySetsFile.Role body = doc.roles.get(role);
      keys = new LinkedHashMap<>(body.keys());
      for (Map.Entry<String, String> p : body.clientPrefixes().entrySet()) {
        prefixes.put(p.getKey(), p.getValue().equals(sets.anyKey()) ? Set.of()
            : Set.copyOf(role(doc, p.getValue()).keys().keySet()));
      }
      if (role.equals(STREAMS)) { // Streams also takes every client config unprefixed
        for (String other : CLIENTS) {
          for (Map.Entry<String, KeySpec> e : role(doc, other).keys().entrySet()) {
            keys.putIfAbsent(e.getKey(), e.getValue());
          }
        }
      }
      keys = withReleaseDefaults(sets.defaults(), keys, doc.family, role, release, body.keys().keySet());
    } else {
      throw new IllegalArgumentException(doc.file + " has no role '" + role + "'");
    }
    String base = doc.file.endsWith(".json") ? doc.file.substring(0, doc.file.length() - 5) : doc.file;
    return new Profile(base + "/" + role + "@" + release, doc.family, doc.version, role, sets.judgeOf(doc), keys,
        prefixes, doc.aliases, doc.equivalents, sets.defaults().behavioursAt(doc.family, release),
        sets.unknownKeysOf(doc), doc.durations, doc.fileKeys);
  }

  private static KeySetsFile.Role role(KeySetsFile doc, String name) {
    KeySetsFile.Role body = doc.roles.get(name);
    if (body == null) {
      throw new IllegalArgumentException(doc.file + " has no role '" + name + "'");
    }
    return body;
  }

  /** {@code keys} with the defaults {@code defaults.json} records for {@code role} at {@code release}. */
  private static Map<String, KeySpec> withReleaseDefaults(Defaults defaults, Map<String, KeySpec> keys, String family,
      String role, String release, Set<String> own) {
    for (String layer : role.equals(STREAMS) ? STREAMS_LAYERS : List.of(role)) {
      for (Map.Entry<String, String> d : defaults.defaultsAt(family, layer, release).entrySet()) {
        KeySpec spec = keys.get(d.getKey());
        if (spec != null && (layer.equals(role) || !own.contains(d.getKey()))) {
          keys.put(d.getKey(), new KeySpec(spec.type(), d.getValue(), spec.required()));
        }
      }
    }
    return keys;
  }
}
