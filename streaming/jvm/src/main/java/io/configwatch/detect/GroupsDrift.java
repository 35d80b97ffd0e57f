package io.configwatch.detect;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code udfs.rules.groups.assess}: the group-level findings that hold for a group's members (a
 * protocol mix, then strategy lists of classic members), each with its signature, the part that must
 * change for the finding to be emitted again.
 */
final class GroupsDrift {
  /** {@code GroupFinding}. */
  record Finding(String rule, List<String> keys, String message, Map<String, Object> evidence,
      List<String> signature) {}

  private final Groups groups;

  GroupsDrift(Groups groups) {
    this.groups = groups;
  }

  List<Finding> assess(GroupsState state, String label) {
    List<Finding> out = new ArrayList<>(2);
    Finding protocol = protocol(state, label);
    if (protocol != null) {
      out.add(protocol);
    }
    Finding assignment = assignment(state, label);
    if (assignment != null) {
      out.add(assignment);
    }
    return out;
  }

  private Finding assignment(GroupsState state, String label) {
    Map<String, String> classic = new LinkedHashMap<>();
    for (Map.Entry<String, GroupsState.Member> e : state.members.entrySet()) {
      GroupsState.Member m = e.getValue();
      if (groups.defaultProtocol.equals(m.protocol()) && m.strategy() != null) {
        classic.put(e.getKey(), m.strategy());
      }
    }
    Map<String, Long> strategies = counts(classic.values());
    if (strategies.size() < 2) {
      return null;
    }
    Set<String> common = null;
    for (String s : strategies.keySet()) {
      Set<String> names = new HashSet<>(split(s, groups.listSep));
      if (common == null) {
        common = names;
      } else {
        common.retainAll(names);
      }
    }
    List<String> sortedCommon = new ArrayList<>(common);
    sortedCommon.sort(PyJson::compareCodePoints);
    String shown = shown(strategies, groups.listsSep);
    Map<String, Object> evidence = Fleet.evidence("group", label, "strategies", strategies, "common", sortedCommon,
        "members", listed(classic));
    List<String> signature = List.copyOf(strategies.keySet());
    if (common.isEmpty()) {
      String message = FleetText.format(groups.messages.get(groups.assignmentDrift),
          Map.of("label", label, "shown", shown));
      return new Finding(groups.assignmentDrift, groups.assignmentKeys, message, evidence, signature);
    }
    String selected = selected(classic.values(), common);
    evidence.put("selected", selected);
    String message = FleetText.format(groups.messages.get(groups.assignmentTransition), Map.of("label", label,
        "shown", shown, "selected", selected, "common", String.join(groups.namesSep, sortedCommon)));
    return new Finding(groups.assignmentTransition, groups.assignmentKeys, message, evidence, signature);
  }

  private Finding protocol(GroupsState state, String label) {
    List<String> protocols = new ArrayList<>(state.members.size());
    Map<String, String> byMember = new LinkedHashMap<>();
    for (Map.Entry<String, GroupsState.Member> e : state.members.entrySet()) {
      String p = FleetText.str(e.getValue().protocol());
      protocols.add(p);
      byMember.put(e.getKey(), p);
    }
    Map<String, Long> counted = counts(protocols);
    if (counted.size() < 2) {
      return null;
    }
    String shown = shown(counted, groups.namesSep);
    Map<String, Object> evidence = Fleet.evidence("group", label, "protocols", counted, "members", listed(byMember));
    String rule = groups.migratable.containsAll(counted.keySet()) ? groups.protocolMigration : groups.protocolDrift;
    String message = FleetText.format(groups.messages.get(rule), Map.of("label", label, "shown", shown));
    return new Finding(rule, groups.protocolKeys, message, evidence, List.copyOf(counted.keySet()));
  }

  private String shown(Map<String, Long> counted, String sep) {
    List<String> parts = new ArrayList<>(counted.size());
    for (Map.Entry<String, Long> e : counted.entrySet()) {
      parts.add(FleetText.format(groups.counted, Map.of("value", e.getKey(), "count", e.getValue())));
    }
    return String.join(sep, parts);
  }

  /** {@code _selected}: the common assignor most members list first among the common ones (ties: by name). */
  private String selected(Iterable<String> lists, Set<String> common) {
    List<String> first = new ArrayList<>();
    for (String s : lists) {
      for (String n : split(s, groups.listSep)) {
        if (common.contains(n)) {
          first.add(n);
          break;
        }
      }
    }
    String best = null;
    long votes = -1;
    for (Map.Entry<String, Long> e : counts(first).entrySet()) { // code point order: the first of a tie wins
      if (e.getValue() > votes) {
        best = e.getKey();
        votes = e.getValue();
      }
    }
    return best;
  }

  /** {@code _counts}: how many of each value, in code point order. */
  static Map<String, Long> counts(Iterable<String> values) {
    Map<String, Long> out = new TreeMap<>(PyJson::compareCodePoints);
    for (String v : values) {
      out.merge(FleetText.str(v), 1L, Long::sum);
    }
    return new LinkedHashMap<>(out);
  }

  /** {@code _listed}: member fingerprints per value, in code point order, at most {@code EVIDENCE_MEMBERS} each. */
  private Map<String, List<String>> listed(Map<String, String> members) {
    List<String> names = new ArrayList<>(members.keySet());
    names.sort(PyJson::compareCodePoints);
    Map<String, List<String>> out = new TreeMap<>(PyJson::compareCodePoints);
    for (String member : names) {
      List<String> list = out.computeIfAbsent(members.get(member), k -> new ArrayList<>());
      if (list.size() < groups.evidenceMembers) {
        list.add(member);
      }
    }
    return new LinkedHashMap<>(out);
  }

  /** Python's {@code s.split(sep)}: every part, empty ones included. */
  static List<String> split(String s, String sep) {
    List<String> out = new ArrayList<>();
    int start = 0;
    int at;
    while ((at = s.indexOf(sep, start)) >= 0) {
      out.add(s.substring(start, at));
      start = at + sep.length();
    }
    out.add(s.substring(start));
    return out;
  }
}
