package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The twin of {@code udfs.rules.groups.GroupState}: each member's (subject fingerprint) latest
 * protocol, canonical strategy list and push time, in Python's dict order (which decides who stays
 * when more than {@code MAX_MEMBERS} share a time), with its JSON text byte for byte.
 */
final class GroupsState {
  /** One member's latest observation. */
  record Member(String protocol, String strategy, long timestampMs) {}

  final LinkedHashMap<String, Member> members;

  GroupsState(LinkedHashMap<String, Member> members) {
    this.members = members;
  }

  static GroupsState empty() {
    return new GroupsState(new LinkedHashMap<>());
  }

  /** {@code GroupState.merge}: each member's latest observation (a tie goes to {@code other}). */
  GroupsState merge(Map<String, Member> other) {
    LinkedHashMap<String, Member> merged = new LinkedHashMap<>(members);
    for (Map.Entry<String, Member> e : other.entrySet()) {
      Member mine = merged.get(e.getKey());
      if (mine == null || e.getValue().timestampMs() >= mine.timestampMs()) {
        merged.put(e.getKey(), e.getValue());
      }
    }
    return new GroupsState(merged);
  }

  /** {@code GroupState.observe}. */
  GroupsState observe(String member, String protocol, String strategy, long atMs) {
    LinkedHashMap<String, Member> one = new LinkedHashMap<>();
    one.put(member, new Member(protocol, strategy, atMs));
    return merge(one);
  }

  /** {@code GroupState.bounded}: members seen within {@code ttlMs} of {@code nowMs}, the newest {@code max}. */
  GroupsState bounded(long nowMs, long ttlMs, int max) {
    LinkedHashMap<String, Member> live = new LinkedHashMap<>();
    for (Map.Entry<String, Member> e : members.entrySet()) {
      if (within(nowMs, e.getValue().timestampMs(), ttlMs)) {
        live.put(e.getKey(), e.getValue());
      }
    }
    if (live.size() > max) {
      List<Map.Entry<String, Member>> newest = new ArrayList<>(live.entrySet());
      // Python's sorted(..., reverse=True) is stable: equal times keep their order
      newest.sort((a, b) -> Long.compare(b.getValue().timestampMs(), a.getValue().timestampMs()));
      live = new LinkedHashMap<>();
      for (Map.Entry<String, Member> e : newest.subList(0, max)) {
        live.put(e.getKey(), e.getValue());
      }
    }
    return new GroupsState(live);
  }

  /** {@code now - at <= ttl} in Python's unbounded ints. */
  private static boolean within(long now, long at, long ttl) {
    long d = now - at;
    boolean overflow = ((now ^ at) & (now ^ d)) < 0;
    return overflow ? now < at : d <= ttl;
  }

  /** The latest time of any member (0 for none). */
  long latest() {
    long out = 0;
    boolean any = false;
    for (Member m : members.values()) {
      out = any ? Math.max(out, m.timestampMs()) : m.timestampMs();
      any = true;
    }
    return out;
  }

  /** {@code GroupState.to_json}: members in code point order, {@code [protocol, strategy, time]} each. */
  String toJson() {
    List<String> names = new ArrayList<>(members.keySet());
    names.sort(PyJson::compareCodePoints);
    StringBuilder out = new StringBuilder(32 + 64 * names.size());
    out.append('{');
    for (int i = 0; i < names.size(); i++) {
      Member m = members.get(names.get(i));
      if (i > 0) {
        out.append(',');
      }
      FleetJson.string(out, names.get(i));
      out.append(":[");
      FleetJson.write(out, m.protocol());
      out.append(',');
      FleetJson.write(out, m.strategy());
      out.append(',').append(m.timestampMs()).append(']');
    }
    return out.append('}').toString();
  }

  /** {@code GroupState.from_json} (null or empty: no members). */
  static GroupsState fromJson(String json) {
    LinkedHashMap<String, Member> members = new LinkedHashMap<>();
    if (json != null && !json.isEmpty()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = FleetJson.parse(json).fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        JsonNode o = e.getValue();
        members.put(e.getKey(), new Member(text(o.get(0)), text(o.get(1)), o.get(2).asLong()));
      }
    }
    return new GroupsState(members);
  }

  private static String text(JsonNode node) {
    Object value = FleetJson.scalar(node);
    return value == null ? null : value.toString();
  }
}
