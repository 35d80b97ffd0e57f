package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Groups: {"batches": [[{group_fp, group, protocol, strategy, member_fp, timestamp_ms}, ...], ...],
 * "state": json|null} -> as FleetProbe; {"canonical": strategy} -> canonical_strategy; {"observe": {role, group_id, protocol, strategy, timestamp_ms, subject_fp, secrets: [...]}}
 * -> the GroupRow as [group_fp, group, protocol, strategy, member, timestamp_ms] or null. FleetProbe passes
 * on an input with "groups": true, so that one JVM answers both kinds.
 */
public final class GroupsProbe {
  private GroupsProbe() {}

  public static void main(String[] args) throws Exception {
    Probes.run(args, GroupsProbe::answer);
  }

  static Object answer(Knowledge knowledge, Keyed keyed, JsonNode input) {
    Groups groups = Groups.of(knowledge);
    if (input.has("observe")) {
      JsonNode o = input.get("observe");
      Set<String> secrets = new HashSet<>(Knowledge.strings(o.get("secrets")));
      JsonNode t = o.get("timestamp_ms");
      GroupRow row = groups.observe(Probes.text(o, "role"), Probes.text(o, "group_id"), Probes.text(o, "protocol"),
          Probes.text(o, "strategy"), t == null || t.isNull() ? null : t.asLong(), Probes.text(o, "subject_fp"),
          keyed, secrets::contains);
      return row == null ? null : Arrays.asList(row.groupFp(), row.group(), row.protocol(), row.strategy(),
          row.member(), row.timestampMs());
    }
    if (input.has("canonical")) {
      return groups.canonicalStrategy(Probes.text(input, "canonical"), keyed);
    }
    Findings findings = new Findings(knowledge, keyed);
    String state = Probes.text(input, "state");
    List<Object> answers = new ArrayList<>();
    for (JsonNode batch : input.get("batches")) {
      List<GroupRow> rows = new ArrayList<>();
      for (JsonNode r : batch) {
        JsonNode t = r.get("timestamp_ms");
        rows.add(new GroupRow(Probes.text(r, "group_fp"), Probes.text(r, "group"), Probes.text(r, "protocol"),
            Probes.text(r, "strategy"), Probes.text(r, "member_fp"), t == null || t.isNull() ? null : t.asLong()));
      }
      Fleet.Result result = groups.step(rows, state);
      state = result.stateJson();
      answers.add(FleetProbe.answer(result, findings));
    }
    return answers;
  }
}
