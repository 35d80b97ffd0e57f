package io.configwatch.detect;

import java.util.List;

/**
 * Typos and GoDurations: {"edit": [a, b, bound]} -> edit_distance; {"nearest": [file, role, release, key]} ->
 * [name, distance] or null; {"go": text} -> repr of go_duration_ms or null.
 */
public final class TyposProbe {
  private TyposProbe() {}

  public static void main(String[] args) throws Exception {
    Object[] engine = new Object[3];
    Probes.run(args, (knowledge, keyed, in) -> {
      if (engine[0] == null) {
        engine[0] = KeySets.of(knowledge);
        engine[1] = Typos.of(knowledge, (KeySets) engine[0]);
        engine[2] = new GoDurations(knowledge);
      }
      if (in.has("edit")) {
        var a = in.get("edit");
        return (long) Typos.editDistance(a.get(0).asText(), a.get(1).asText(), a.get(2).asInt());
      }
      if (in.has("go")) {
        double ms = ((GoDurations) engine[2]).ms(in.get("go").isNull() ? null : in.get("go").asText());
        return Double.isNaN(ms) ? null : AnomaliesProbe.repr(ms);
      }
      var a = in.get("nearest");
      Profile p = ((KeySets) engine[0]).profile(a.get(0).asText(), a.get(1).asText(), a.get(2).asText());
      Typos.Match m = ((Typos) engine[1]).nearestKnown(p, a.get(3).asText());
      return m == null ? null : List.of(m.name(), (long) m.distance());
    });
  }
}
