package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Known configuration keys of each client software family: the twin of {@code udfs.rules.keysets}
 * ({@code family_of}, {@code key_set_file}, {@code profile}, {@code resolve_profiles} and
 * {@code _infer_roles} for one push, {@code known_anywhere}) and of {@code udfs.sensitivity.custom_mask}
 * for one entry. Profiles are cached per (file, role, release) and the file and band per distinct
 * software name and version, as Python caches them. Not thread-safe: one instance per task thread.
 */
public final class KeySets implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One entry of {@code families.json}. */
  record Family(String family, Set<String> names, List<String> namePrefixes, Map<String, String> fields,
      List<String[]> keySets) implements Serializable {}

  private record FileBand(String file, String band) implements Serializable {}

  // Both are map keys looked up for every push: equals and hashCode are written out, as a record's generated
  // ones go through method handles that the JIT does not always inline.
  private record ProfileKey(String file, String role, String release) implements Serializable {
    @Override
    public boolean equals(Object o) {
      return o instanceof ProfileKey k && Objects.equals(file, k.file) && Objects.equals(role, k.role)
          && Objects.equals(release, k.release);
    }

    @Override
    public int hashCode() {
      return 31 * (31 * Objects.hashCode(file) + Objects.hashCode(role)) + Objects.hashCode(release);
    }
  }

  private record Pair(String name, String version) implements Serializable {
    @Override
    public boolean equals(Object o) {
      return o instanceof Pair p && Objects.equals(name, p.name) && Objects.equals(version, p.version);
    }

    @Override
    public int hashCode() {
      return 31 * Objects.hashCode(name) + Objects.hashCode(version);
    }
  }

  private static final FileBand NONE = new FileBand(null, null);

  private final List<Family> families = new ArrayList<>();
  private final Map<String, KeySetsFile> files = new HashMap<>();
  private final Set<String> knownAnywhere = new HashSet<>();
  private final Defaults defaults;
  private final Pattern keySetVersion;
  private final List<String> roles;
  private final String unknownRole;
  private final String anyKey;
  private final String defaultJudge;
  private final String ignoresUnknownKeys;
  private transient Map<Pair, FileBand> chosen;
  private transient Map<ProfileKey, Profile> profiles;

  private KeySets(Knowledge knowledge) {
    JsonNode section = knowledge.section("keysets");
    roles = Knowledge.strings(section.get("roles"));
    unknownRole = section.get("unknown_role").asText();
    anyKey = section.get("any_key").asText();
    defaultJudge = section.get("default_judge").asText();
    ignoresUnknownKeys = section.get("ignores_unknown_keys").asText();
    String defaultDurations = section.get("default_durations").asText();
    keySetVersion = Defaults.pythonPattern(section.get("key_set_version").asText());
    for (String role : List.of("producer", "consumer", "admin", "streams")) { // the roles the algorithm names
      if (!roles.contains(role)) {
        throw new IllegalArgumentException("udfs.rules.keysets.ROLES has no " + role);
      }
    }
    defaults = new Defaults(knowledge);
    JsonNode data = knowledge.section("data");
    for (JsonNode fam : data.get("families.json").get("families")) {
      List<String[]> sets = new ArrayList<>();
      for (JsonNode entry : fam.get("key_sets")) {
        String file = entry.get("file").asText();
        sets.add(new String[] {entry.get("from_version").asText(), file});
        if (!files.containsKey(file)) {
          KeySetsFile doc = new KeySetsFile(file, data.get(file), defaultDurations);
          files.put(file, doc);
        }
        knownAnywhere.addAll(files.get(file).fileKeys);
      }
      Map<String, String> fields = new HashMap<>(); // each scalar field as Python's str() writes it
      fam.fields().forEachRemaining(f -> {
        if (f.getValue().isValueNode()) {
          fields.put(f.getKey(), pyStr(f.getValue()));
        }
      });
      families.add(new Family(fam.get("family").asText(), new HashSet<>(Knowledge.strings(fam.get("names"))),
          Knowledge.strings(fam.get("name_prefixes")), fields, sets));
    }
  }

  public static KeySets of(Knowledge knowledge) {
    return new KeySets(knowledge);
  }

  Defaults defaults() {
    return defaults;
  }

  /** The role of a push whose keys do not tell ({@code UNKNOWN_ROLE}). */
  String unknownRole() {
    return unknownRole;
  }

  /** What {@code unknown_keys} says of a client that runs with a key it does not know. */
  String ignoresUnknownKeys() {
    return ignoresUnknownKeys;
  }

  /** {@code family_of}: the family entry for a KIP-511 software name, or null. */
  Family familyOf(String softwareName) {
    if (softwareName == null || softwareName.isEmpty()) {
      return null;
    }
    for (Family fam : families) {
      if (fam.names().contains(softwareName)) {
        return fam;
      }
      for (String prefix : fam.namePrefixes()) {
        if (softwareName.startsWith(prefix)) {
          return fam;
        }
      }
    }
    return null;
  }

  /** {@code key_set_file}: the data file describing this software name and version, or null. */
  String keySetFile(String softwareName, String softwareVersion) {
    Family fam = familyOf(softwareName);
    if (fam == null || fam.keySets().isEmpty()) {
      return null;
    }
    Defaults.Version version = Defaults.leading(keySetVersion, softwareVersion == null ? "" : softwareVersion);
    String chosenFile = fam.keySets().get(fam.keySets().size() - 1)[1]; // unparseable: the newest key set
    if (version != null) {
      for (String[] entry : fam.keySets()) {
        Defaults.Version from = Defaults.leading(keySetVersion, entry[0]);
        if (from == null) {
          from = Defaults.leading(keySetVersion, "0");
        }
        if (version.compareTo(from) >= 0) {
          chosenFile = entry[1];
        }
      }
    }
    return chosenFile;
  }

  private FileBand fileAndBand(String softwareName, String softwareVersion) {
    if (chosen == null) {
      chosen = lru(4096);
    }
    Pair pair = new Pair(softwareName, softwareVersion);
    FileBand out = chosen.get(pair);
    if (out == null) {
      String file = keySetFile(softwareName, softwareVersion);
      out = file == null ? NONE : new FileBand(file, defaults.band(files.get(file).family, softwareVersion));
      chosen.put(pair, out);
    }
    return out;
  }

  /** {@code resolve_profiles} for one push: its profile, or null when its family has no key set. */
  public Profile resolve(String softwareName, String softwareVersion, List<String> keys) {
    FileBand fb = fileAndBand(softwareName, softwareVersion);
    if (fb.file() == null) {
      return null;
    }
    return profile(fb.file(), inferRole(files.get(fb.file()), keys), fb.band());
  }

  /** {@code _infer_roles} for one push: the majority of role-revealing keys, Streams first, admin if only admin's. */
  private String inferRole(KeySetsFile doc, List<String> keys) {
    if (doc.singleRole) { // one config struct for every role (sarama, franz-go)
      return unknownRole;
    }
    KeySetsFile.Role admin = doc.roles.get("admin");
    if (admin == null) {
      throw new IllegalArgumentException(doc.file + " has no role 'admin'");
    }
    int producer = 0;
    int consumer = 0;
    int streams = 0;
    int notAdmin = 0;
    for (String key : keys) {
      String role = key == null ? null : doc.exclusive.get(key);
      if (role != null) {
        switch (role) {
          case "producer" -> producer++;
          case "consumer" -> consumer++;
          case "streams" -> streams++;
          default -> { }
        }
      }
      if (key == null || !admin.keys().containsKey(key)) {
        notAdmin++;
      }
    }
    String role = unknownRole;
    if (producer == 0 && consumer == 0 && notAdmin == 0) {
      role = "admin";
    }
    if (producer > consumer) { // the majority of role-revealing keys wins; a tie stays unknown
      role = "producer";
    }
    if (consumer > producer) {
      role = "consumer";
    }
    if (streams > 0) {
      role = "streams";
    }
    return role;
  }

  /** {@code profile(file, role, release)}; a null or empty release judges with the file's own release. */
  Profile profile(String file, String role, String release) {
    if (profiles == null) {
      profiles = new HashMap<>();
    }
    ProfileKey key = new ProfileKey(file, role, release);
    Profile out = profiles.get(key);
    if (out == null) {
      KeySetsFile doc = files.get(file);
      if (doc == null) {
        throw new IllegalArgumentException("known-key data file " + file + " is missing or not JSON");
      }
      out = KeySetsProfiles.build(this, doc, role, release == null || release.isEmpty()
          ? defaults.band(doc.family, doc.version) : release);
      profiles.put(key, out);
    }
    return out;
  }

  /** {@code _family_field}: a field of the family entry of the file's family, as {@code str()}, or {@code missing}. */
  String familyField(KeySetsFile doc, String name, String missing) {
    for (Family fam : families) {
      if (fam.family().equals(doc.family)) {
        return fam.fields().getOrDefault(name, missing);
      }
    }
    return missing;
  }

  String judgeOf(KeySetsFile doc) {
    return familyField(doc, "judge", defaultJudge);
  }

  String unknownKeysOf(KeySetsFile doc) {
    return familyField(doc, "unknown_keys", ignoresUnknownKeys);
  }

  String anyKey() {
    return anyKey;
  }

  /** Python's {@code str()} of a JSON scalar. */
  static String pyStr(JsonNode v) {
    if (v.isNull()) {
      return "None";
    }
    if (v.isBoolean()) {
      return v.asBoolean() ? "True" : "False";
    }
    return v.asText();
  }

  /** {@code known_anywhere} for one key: some family's key set knows it. */
  public boolean knownAnywhere(String key) {
    return key != null && knownAnywhere.contains(key);
  }

  /** {@code custom_mask} for one entry: outside the profile's known keys, or, without one, unknown to every family. */
  public boolean custom(Profile profileOrNull, String key) {
    return profileOrNull == null ? !knownAnywhere(key) : !profileOrNull.known(key);
  }

  static <K, V> Map<K, V> lru(int bound) {
    return new LinkedHashMap<>(256, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > bound;
      }
    };
  }
}
