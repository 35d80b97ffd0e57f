package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * KeySets, Profile and Defaults: {"op": family|file|band|version_tuple|defaults_at|behaviours_at|profile|
 * known_anywhere|push, ...} -> what the Python function of the same name answers (see
 * tests/test_detect_jvm_profiles.py).
 */
public final class KeySetsProbe {
  private KeySetsProbe() {}

  static Map<String, Object> describe(Profile p) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("id", p.id());
    out.put("family", p.family());
    out.put("version", p.version());
    out.put("role", p.role());
    out.put("judge", p.judge());
    out.put("unknown_keys", p.unknownKeys());
    out.put("durations", p.durations());
    List<Object> keys = new ArrayList<>();
    for (Map.Entry<String, KeySpec> e : p.keys().entrySet()) {
      keys.add(List.of(e.getKey(), e.getValue().type(), e.getValue().defaultValue() == null ? "\u0000null"
          : e.getValue().defaultValue(), e.getValue().required()));
    }
    out.put("keys", keys);
    Map<String, Object> prefixes = new TreeMap<>(PyJson::compareCodePoints);
    for (Map.Entry<String, java.util.Set<String>> e : p.prefixes().entrySet()) {
      List<String> names = new ArrayList<>(e.getValue());
      names.sort(PyJson::compareCodePoints);
      prefixes.put(e.getKey(), names);
    }
    out.put("prefixes", prefixes);
    out.put("aliases", p.aliases());
    out.put("equivalents", p.equivalents());
    List<String> behaviours = new ArrayList<>(p.behaviours());
    behaviours.sort(PyJson::compareCodePoints);
    out.put("behaviours", behaviours);
    return out;
  }

  static List<String> strings(JsonNode array) {
    return Knowledge.strings(array);
  }

  public static void main(String[] args) throws Exception {
    KeySets[] sets = new KeySets[1];
    Probes.run(args, (knowledge, keyed, in) -> {
      if (sets[0] == null) {
        sets[0] = KeySets.of(knowledge);
      }
      KeySets ks = sets[0];
      Defaults d = ks.defaults();
      switch (in.get("op").asText()) {
        case "family" -> {
          KeySets.Family f = ks.familyOf(Probes.text(in, "name"));
          return f == null ? null : f.family();
        }
        case "file" -> {
          return ks.keySetFile(Probes.text(in, "name"), Probes.text(in, "version"));
        }
        case "band" -> {
          return d.band(Probes.text(in, "family"), Probes.text(in, "version"));
        }
        case "version_tuple" -> {
          Defaults.Version v = d.versionTuple(Probes.text(in, "version"));
          return v == null ? null : v.toString();
        }
        case "defaults_at" -> {
          return d.defaultsAt(Probes.text(in, "family"), Probes.text(in, "role"), Probes.text(in, "release"));
        }
        case "behaviours_at" -> {
          List<String> out = new ArrayList<>(d.behavioursAt(Probes.text(in, "family"), Probes.text(in, "release")));
          out.sort(PyJson::compareCodePoints);
          return out;
        }
        case "profile" -> {
          Profile p = ks.profile(Probes.text(in, "file"), Probes.text(in, "role"), Probes.text(in, "release"));
          Map<String, Object> out = describe(p);
          Map<String, Object> rules = new LinkedHashMap<>();
          for (String rk : strings(in.get("rule_keys"))) {
            rules.put(rk, List.of(p.sources(rk), p.defaultOf(rk) == null ? "\u0000null" : p.defaultOf(rk),
                p.typeOf(rk) == null ? "\u0000null" : p.typeOf(rk), p.canonical(rk)));
          }
          out.put("rules", rules);
          List<Boolean> known = new ArrayList<>();
          for (String k : strings(in.get("probe_keys"))) {
            known.add(p.known(k));
          }
          out.put("known", known);
          return out;
        }
        case "known_anywhere" -> {
          List<Boolean> out = new ArrayList<>();
          for (String k : strings(in.get("keys"))) {
            out.add(ks.knownAnywhere(k));
          }
          return out;
        }
        default -> {
          List<String> keys = strings(in.get("keys"));
          Profile p = ks.resolve(Probes.text(in, "name"), Probes.text(in, "version"), keys);
          List<Boolean> custom = new ArrayList<>();
          for (String k : keys) {
            custom.add(ks.custom(p, k));
          }
          Map<String, Object> out = new LinkedHashMap<>();
          out.put("profile", p == null ? null : p.id());
          out.put("custom", custom);
          return out;
        }
      }
    });
  }
}
