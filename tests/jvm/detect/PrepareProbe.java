package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link Detector#prepare} for one decoded push ({"push": row, "now": ms}): its finished findings as
 * [alert_id, json] pairs, its fleet row and its group row (or null), as the routed rows carry them.
 */
public final class PrepareProbe {
  private PrepareProbe() {}

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

  static Map<String, Object> context(Context c) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("client_instance_id", c.clientInstanceId());
    out.put("client_software_name", c.clientSoftwareName());
    out.put("client_software_version", c.clientSoftwareVersion());
    out.put("client_id", c.clientId());
    out.put("principal", c.principal());
    out.put("client_address", c.clientAddress());
    out.put("timestamp_ms", c.timestampMs());
    out.put("subject_fp", c.subject());
    return out;
  }

  public static void main(String[] args) throws Exception {
    Detector[] detector = new Detector[1];
    Probes.run(args, (knowledge, keyed, input) -> {
      if (detector[0] == null) {
        detector[0] = new Detector(knowledge, keyed);
      }
      Detector.Prepared p = detector[0].prepare(push(input.get("push")), input.get("now").asLong());
      Map<String, Object> out = new LinkedHashMap<>();
      List<Object> findings = new ArrayList<>();
      for (Findings.Finished f : p.findings()) {
        findings.add(List.of(f.alertId(), f.json()));
      }
      out.put("findings", findings);
      if (p.fleet() != null) {
        Map<String, Object> fleet = new LinkedHashMap<>();
        fleet.put("peer_group", p.fleet().peerGroup());
        fleet.put("keys", p.fleet().keys());
        List<Object> values = new ArrayList<>();
        for (double v : p.fleet().values()) {
          values.add(v);
        }
        fleet.put("values", values);
        fleet.put("context", context(p.fleet().context()));
        out.put("fleet", fleet);
      } else {
        out.put("fleet", null);
      }
      if (p.group() != null) {
        GroupRow g = p.group();
        Map<String, Object> group = new LinkedHashMap<>();
        group.put("group_fp", g.groupFp());
        group.put("group", g.group());
        group.put("protocol", g.protocol());
        group.put("strategy", g.strategy());
        group.put("member_fp", g.member());
        group.put("timestamp_ms", g.timestampMs());
        out.put("group", group);
      } else {
        out.put("group", null);
      }
      return out;
    });
  }
}
