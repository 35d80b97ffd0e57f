package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One push through KeySets, Effective, Anomalies and Typos: {"push": row, "name": safe software name,
 * "version": safe version, "safe": [key == safe_key per entry]} -> {"profile", "custom", "effective",
 * "anomalies", "typos"}; findings as [rule, keys, message, evidence JSON with sorted keys]. With "serialized":
 * true the engines went through Java serialization first (a profile resolved before it, too).
 */
public final class AnomaliesProbe {
  private AnomaliesProbe() {}

  /** Python's {@code repr(float)}. */
  static String repr(double x) {
    if (Double.isNaN(x)) {
      return "nan";
    }
    if (Double.isInfinite(x)) {
      return x > 0 ? "inf" : "-inf";
    }
    return PyJson.floatRepr(x);
  }

  static List<Object> findings(List<RawFinding> raw) {
    List<Object> out = new ArrayList<>();
    for (RawFinding f : raw) {
      out.add(List.of(f.rule(), f.keys(), f.message(), PyJson.dumps(f.evidence(), true)));
    }
    return out;
  }

  static Push push(JsonNode row) {
    List<Entry> entries = new ArrayList<>();
    for (JsonNode e : row.get("configs")) {
      entries.add(new Entry(Probes.text(e, "key"), Probes.text(e, "value"), Probes.text(e, "type"),
          e.path("is_default").asBoolean(false), e.path("redacted").asBoolean(false), Probes.text(e, "fingerprint")));
    }
    JsonNode ts = row.get("timestamp_ms");
    return new Push(Probes.text(row, "client_instance_id"), Probes.text(row, "client_software_name"),
        Probes.text(row, "client_software_version"), Probes.text(row, "client_id"), Probes.text(row, "principal"),
        Probes.text(row, "client_address"), Probes.text(row, "connection_id"),
        ts == null || ts.isNull() ? null : ts.asLong(), entries);
  }

  /** Through Java serialization and back, as Spark ships engines to executors. */
  static Object roundTrip(Object value) throws Exception {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.ObjectOutputStream out = new java.io.ObjectOutputStream(bytes)) {
      out.writeObject(value);
    }
    try (java.io.ObjectInputStream in = new java.io.ObjectInputStream(
        new java.io.ByteArrayInputStream(bytes.toByteArray()))) {
      return in.readObject();
    }
  }

  public static void main(String[] args) throws Exception {
    Object[][] engines = new Object[2][];
    Probes.run(args, (knowledge, keyed, in) -> {
      int which = in.path("serialized").asBoolean(false) ? 1 : 0;
      if (engines[which] == null) {
        KeySets sets = KeySets.of(knowledge);
        Object[] built = {sets, Anomalies.of(knowledge), Typos.of(knowledge, sets)};
        if (which == 1) { // caches filled before the engines travel
          Profile warm = sets.resolve("apache-kafka-java", "3.9.0", List.of("acks", "lingr.ms"));
          warm.sources("acks");
          ((Typos) built[2]).findings(warm, List.of("lingr.ms"), new boolean[] {true}, new boolean[] {true});
        }
        engines[which] = which == 0 ? built : (Object[]) roundTrip(built);
      }
      Object[] engine = engines[which];
      KeySets ks = (KeySets) engine[0];
      Push push = push(in.get("push"));
      List<String> keys = new ArrayList<>();
      for (Entry e : push.entries()) {
        keys.add(e.key());
      }
      Profile p = ks.resolve(Probes.text(in, "name"), Probes.text(in, "version"), keys);
      boolean[] custom = new boolean[keys.size()];
      boolean[] safe = new boolean[keys.size()];
      List<Boolean> customs = new ArrayList<>();
      for (int i = 0; i < keys.size(); i++) {
        custom[i] = ks.custom(p, keys.get(i));
        safe[i] = in.get("safe").get(i).asBoolean();
        customs.add(custom[i]);
      }
      Effective e = Effective.of(knowledge, push, p);
      Map<String, Object> values = new LinkedHashMap<>();
      List<Boolean> sent = new ArrayList<>();
      List<Boolean> explicit = new ArrayList<>();
      for (String k : e.ruleKeys()) {
        Object v = e.value(k);
        values.put(k, v instanceof Double d ? repr(d) : v);
        sent.add(e.sent(k));
        explicit.add(e.explicit(k));
      }
      Map<String, Object> eff = new LinkedHashMap<>();
      eff.put("values", values);
      eff.put("sent", sent);
      eff.put("explicit", explicit);
      eff.put("role", e.role());
      eff.put("judge", e.judge());
      eff.put("yields", e.yields());
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("profile", p == null ? null : p.id());
      out.put("custom", customs);
      out.put("effective", eff);
      out.put("anomalies", findings(((Anomalies) engine[1]).evaluate(e)));
      out.put("typos", findings(((Typos) engine[2]).findings(p, keys, custom, safe)));
      return out;
    });
  }
}
