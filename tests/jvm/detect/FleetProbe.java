package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Fleet: {"peer_group": g, "batches": [[{"keys": [...], "values": [repr, ...], "context": {...}}, ...], ...],
 * "state": json|null} -> per batch, against the state the batch before left, {"findings": [contract JSON
 * text, ...] (sorted by alert id, stably, as to_table), "state": json}, or {"error": exception class} (and
 * no more); {"round_trip": json} -> the state's text rewritten; {"sentinel": [repr, ...]} -> is_sentinel;
 * {"groups": true, ...} -> GroupsProbe's answer.
 */
public final class FleetProbe {
  static final long NOW = 1_700_000_000_000L;

  private FleetProbe() {}

  static double number(JsonNode node) {
    String s = node.asText();
    return switch (s) {
      case "nan" -> Double.NaN;
      case "inf" -> Double.POSITIVE_INFINITY;
      case "-inf" -> Double.NEGATIVE_INFINITY;
      default -> Double.parseDouble(s);
    };
  }

  static Context context(JsonNode c) {
    JsonNode t = c.get("timestamp_ms");
    return new Context(Probes.text(c, "client_instance_id"), Probes.text(c, "client_software_name"),
        Probes.text(c, "client_software_version"), Probes.text(c, "client_id"), Probes.text(c, "principal"),
        Probes.text(c, "client_address"), t == null || t.isNull() ? null : t.asLong(), Probes.text(c, "subject_fp"));
  }

  static Object answer(Fleet.Result result, Findings findings) {
    List<Findings.Finished> done = new ArrayList<>();
    for (Fleet.Scored s : result.findings()) {
      Context c = s.context();
      if (c.subject() == null) { // Findings.finish keys the alert id on String.valueOf(null), Python on str(None)
        c = new Context(c.clientInstanceId(), c.clientSoftwareName(), c.clientSoftwareVersion(), c.clientId(),
            c.principal(), c.clientAddress(), c.timestampMs(), "None");
      }
      done.add(findings.finish(s.finding(), c, NOW));
    }
    done.sort(Comparator.comparing(Findings.Finished::alertId));
    List<String> texts = new ArrayList<>();
    for (Findings.Finished f : done) {
      texts.add(f.json());
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("findings", texts);
    out.put("state", result.stateJson());
    return out;
  }

  public static void main(String[] args) throws Exception {
    Probes.run(args, (knowledge, keyed, input) -> {
      if (input.path("groups").asBoolean(false)) {
        return GroupsProbe.answer(knowledge, keyed, input);
      }
      Fleet fleet = Fleet.of(knowledge);
      if (input.has("round_trip")) {
        return fleet.roundTrip(input.get("round_trip").asText());
      }
      if (input.has("sentinel")) {
        List<Boolean> out = new ArrayList<>();
        for (JsonNode v : input.get("sentinel")) {
          out.add(fleet.isSentinel(number(v)));
        }
        return out;
      }
      Findings findings = new Findings(knowledge, keyed);
      String state = Probes.text(input, "state");
      List<Object> answers = new ArrayList<>();
      for (JsonNode batch : input.get("batches")) { // each batch against the state the one before left
        try {
          Fleet.Result result = fleet.step(input.get("peer_group").asText(), rows(batch), state);
          state = result.stateJson();
          answers.add(answer(result, findings));
        } catch (ArithmeticException e) {
          answers.add(Map.of("error", e.getClass().getSimpleName()));
          break;
        }
      }
      return answers;
    });
  }

  static List<FleetRow> rows(JsonNode batch) {
    List<FleetRow> rows = new ArrayList<>();
    for (JsonNode r : batch) {
      double[] values = new double[r.get("values").size()];
      for (int i = 0; i < values.length; i++) {
        values[i] = number(r.get("values").get(i));
      }
      rows.add(new FleetRow(Probes.text(r, "peer_group"), Knowledge.strings(r.get("keys")), values,
          context(r.get("context"))));
    }
    return rows;
  }
}
