package io.configwatch.detect;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One family key set narrowed to one role, at one release band: the twin of
 * {@code udfs.rules.keysets.Profile} ({@code known_mask} for one key, {@code canonical}, {@code sources},
 * {@code default}, {@code type_of}). Built and cached by {@link KeySets}; immutable but for its caches.
 */
public final class Profile implements Serializable {
  private static final long serialVersionUID = 1L;

  private final String id;
  private final String family;
  private final String version;
  private final String role;
  private final String judge;
  private final Map<String, KeySpec> keys;
  private final Map<String, Set<String>> prefixes;
  private final Map<String, String> aliases;
  private final Map<String, String> equivalents;
  private final Set<String> behaviours;
  private final String unknownKeys;
  private final String durations;
  private final Set<String> familyKeys;
  private transient Map<String, List<String>> sources;

  Profile(String id, String family, String version, String role, String judge, Map<String, KeySpec> keys,
      Map<String, Set<String>> prefixes, Map<String, String> aliases, Map<String, String> equivalents,
      Set<String> behaviours, String unknownKeys, String durations, Set<String> familyKeys) {
    this.id = id;
    this.family = family;
    this.version = version;
    this.role = role;
    this.judge = judge;
    this.keys = Collections.unmodifiableMap(keys);
    this.prefixes = Collections.unmodifiableMap(prefixes);
    this.aliases = Collections.unmodifiableMap(aliases);
    this.equivalents = Collections.unmodifiableMap(equivalents);
    this.behaviours = Collections.unmodifiableSet(behaviours);
    this.unknownKeys = unknownKeys;
    this.durations = durations;
    this.familyKeys = Collections.unmodifiableSet(familyKeys);
  }

  public String id() {
    return id;
  }

  public String family() {
    return family;
  }

  /** The key-set file's release ({@code apache-kafka-java-4.3.json}: 4.3.1). */
  public String version() {
    return version;
  }

  public String role() {
    return role;
  }

  public String judge() {
    return judge;
  }

  /** What the client does with a key it does not know: ignored, rejected or impossible. */
  public String unknownKeys() {
    return unknownKeys;
  }

  /** How its duration keys read: a number in the key's unit, or Go duration text. */
  public String durations() {
    return durations;
  }

  /** The {@code udfs.rules.defaults} behaviours in effect for its releases. */
  public Set<String> behaviours() {
    return behaviours;
  }

  /** The documented keys of the role with type and (release) default, in the data file's order. */
  public Map<String, KeySpec> keys() {
    return keys;
  }

  /** Streams' client prefixes: the keys each one takes (empty: any key). */
  Map<String, Set<String>> prefixes() {
    return prefixes;
  }

  Map<String, String> aliases() {
    return aliases;
  }

  Map<String, String> equivalents() {
    return equivalents;
  }

  /** {@code known_mask} for one key: the client's own key (any role of its key set, or under a client prefix). */
  public boolean known(String key) {
    if (key == null) {
      return false;
    }
    if (keys.containsKey(key) || familyKeys.contains(key)) {
      return true;
    }
    for (Map.Entry<String, Set<String>> p : prefixes.entrySet()) {
      if (key.startsWith(p.getKey())
          && (p.getValue().isEmpty() || p.getValue().contains(key.substring(p.getKey().length())))) {
        return true;
      }
    }
    return false;
  }

  /** The property an alias stands for (librdkafka's {@code linger.ms} is {@code queue.buffering.max.ms}). */
  public String canonical(String key) {
    return aliases.getOrDefault(key, key);
  }

  /** Every pushed key that carries the value a rule reads as {@code ruleKey}, in code point order. */
  public List<String> sources(String ruleKey) {
    Map<String, List<String>> cache = sources;
    if (cache == null) {
      cache = new ConcurrentHashMap<>();
      sources = cache;
    }
    return cache.computeIfAbsent(ruleKey, this::computeSources);
  }

  private List<String> computeSources(String ruleKey) {
    String target = canonical(equivalents.getOrDefault(ruleKey, ruleKey));
    TreeSet<String> names = new TreeSet<>(PyJson::compareCodePoints);
    names.add(target);
    for (Map.Entry<String, String> a : aliases.entrySet()) {
      if (a.getValue().equals(target)) {
        names.add(a.getKey());
      }
    }
    boolean any = keys.containsKey(target);
    for (String name : names) {
      any |= keys.containsKey(name);
    }
    return any ? List.copyOf(new ArrayList<>(names)) : List.of();
  }

  /** The documented default the client uses when it did not send {@code ruleKey} (null: none). */
  public String defaultOf(String ruleKey) {
    String target = canonical(equivalents.getOrDefault(ruleKey, ruleKey));
    KeySpec spec = keys.get(target);
    if (spec == null) {
      spec = keys.get(ruleKey);
    }
    return spec == null ? null : spec.defaultValue();
  }

  /** The ConfigDef type of a key (through its alias), or null. */
  public String typeOf(String key) {
    KeySpec spec = keys.get(canonical(key));
    return spec == null ? null : spec.type();
  }

  @Override
  public String toString() {
    return id;
  }
}
