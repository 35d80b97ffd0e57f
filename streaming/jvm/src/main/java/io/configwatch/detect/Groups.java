package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Consumer-group drift: the twin of {@code udfs.rules.groups.group_observations} for one push ({@link
 * #observe}) and of {@code udfs.rules.stateful.step} for a {@code group|<fingerprint>} key ({@link
 * #step}: {@code drift}, then {@code to_table}'s context), with {@code canonical_strategy}. The state
 * is the key's {@code GroupState} JSON text, byte for byte Python's.
 */
public final class Groups implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int CACHE = 4096;

  final long maxMembers;
  final long memberTtlMs;
  final int evidenceMembers;
  final String defaultProtocol;
  private final Set<String> notConsumers;
  final Set<String> migratable;
  final String listSep;
  private final String customPrefix;
  private final Map<String, String> builtin;
  final String assignmentDrift;
  final String assignmentTransition;
  final String protocolMigration;
  final String protocolDrift;
  final List<String> assignmentKeys;
  final List<String> protocolKeys;
  final String counted;
  final String listsSep;
  final String namesSep;
  final Map<String, String> messages;
  private final String markerPrefix;
  private final String groupSubject;

  private transient Keyed cachedFor; // the caches below hold fingerprints under this key
  private transient Map<String, String[]> groupIds; // group id -> {fingerprint, label}
  private transient Map<String, String> strategies; // strategy as sent -> canonical
  private transient Map<String, String> protocols; // protocol as sent -> stripped, lowered

  private Groups(Knowledge knowledge) {
    JsonNode s = knowledge.section("groups");
    maxMembers = s.get("max_members").asLong();
    memberTtlMs = s.get("member_ttl_ms").asLong();
    evidenceMembers = s.get("evidence_members").asInt();
    defaultProtocol = s.get("default_protocol").asText();
    notConsumers = Set.copyOf(Knowledge.strings(s.get("not_consumers")));
    migratable = Set.copyOf(Knowledge.strings(s.get("migratable")));
    listSep = s.get("list_sep").asText();
    customPrefix = s.get("custom_prefix").asText();
    Map<String, String> names = new HashMap<>();
    s.get("builtin").fields().forEachRemaining(e -> names.put(e.getKey(), e.getValue().asText()));
    builtin = Map.copyOf(names);
    assignmentDrift = s.get("assignment_drift").asText();
    assignmentTransition = s.get("assignment_transition").asText();
    protocolMigration = s.get("protocol_migration").asText();
    protocolDrift = s.get("protocol_drift").asText();
    assignmentKeys = Knowledge.strings(s.get("assignment_keys"));
    protocolKeys = Knowledge.strings(s.get("protocol_keys"));
    counted = s.get("counted").asText();
    listsSep = s.get("lists_sep").asText();
    namesSep = s.get("names_sep").asText();
    Map<String, String> templates = new HashMap<>();
    s.get("messages").fields().forEachRemaining(e -> templates.put(e.getKey(), e.getValue().asText()));
    messages = Map.copyOf(templates);
    markerPrefix = s.get("marker_prefix").asText();
    groupSubject = s.get("group_subject").asText();
  }

  public static Groups of(Knowledge knowledge) {
    return new Groups(knowledge);
  }

  /**
   * {@code group_observations} for one push: null unless it is a consumer (role not producer/admin) naming a
   * non-empty group.id. groupId/protocol/strategy are its effective values ({@code udfs.rules.effective});
   * isSecret is the secret scan (true: a secret), a pure function of the value (its answers are cached).
   */
  public GroupRow observe(String role, String groupId, String protocol, String strategy, Long timestampMs,
      String subjectFp, Keyed keyed, Predicate<String> isSecret) {
    if ((role != null && notConsumers.contains(role)) || groupId == null || groupId.isEmpty()) {
      return null;
    }
    caches(keyed);
    String[] group = groupIds.get(groupId);
    if (group == null) {
      String fp = keyed.fingerprint(groupId);
      group = new String[] {fp, isSecret.test(groupId) ? markerPrefix + fp : groupId};
      groupIds.put(groupId, group);
    }
    String proto = defaultProtocol;
    if (protocol != null) {
      proto = protocols.get(protocol);
      if (proto == null) {
        proto = FleetText.lower(FleetText.strip(protocol));
        protocols.put(protocol, proto);
      }
    }
    String canonical = null;
    if (strategy != null) {
      canonical = strategies.get(strategy);
      if (canonical == null) {
        canonical = canonicalStrategy(strategy, keyed);
        strategies.put(strategy, canonical);
      }
    }
    return new GroupRow(group[0], group[1], proto, canonical, subjectFp, timestampMs);
  }

  private void caches(Keyed keyed) {
    if (cachedFor != keyed || groupIds == null) {
      cachedFor = keyed;
      groupIds = bounded();
      strategies = bounded();
      protocols = bounded();
    }
  }

  private static <V> Map<String, V> bounded() {
    return new LinkedHashMap<>(256, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<String, V> eldest) {
        return size() > CACHE;
      }
    };
  }

  /** {@code canonical_strategy}: built-in names, custom classes as {@code custom:<fingerprint>} (null: null). */
  public String canonicalStrategy(String value, Keyed keyed) {
    if (value == null) {
      return null;
    }
    List<String> out = new ArrayList<>();
    for (String part : GroupsDrift.split(value, listSep)) {
      String name = FleetText.strip(part);
      if (!name.isEmpty()) {
        String known = builtin.get(name);
        out.add(known != null ? known : customPrefix + keyed.fingerprint(name));
      }
    }
    return String.join(listSep, out);
  }

  /** The subject of a group-level finding ({@code group_subject}). */
  public String groupSubject(String groupFp) {
    return groupSubject.replace("{fp}", String.valueOf(groupFp));
  }

  /** step() for a {@code group|<fp>} key: the findings with their contexts and the new state JSON. */
  public Fleet.Result step(List<GroupRow> rows, String stateJson) {
    GroupsState prior = GroupsState.fromJson(stateJson);
    boolean floatTimes = false;
    for (GroupRow r : rows) {
      floatTimes |= r.timestampMs() == null;
    }
    long[] times = new long[rows.size()]; // pd.to_numeric(...).fillna(0).astype("int64")
    for (int i = 0; i < times.length; i++) {
      Long t = rows.get(i).timestampMs();
      times[i] = t == null ? 0 : floatTimes ? (long) (double) t : t;
    }
    Integer[] byTime = new Integer[times.length];
    for (int i = 0; i < byTime.length; i++) {
      byTime[i] = i;
    }
    Arrays.sort(byTime, (a, b) -> Long.compare(times[a], times[b])); // stable, as Python's sorted
    LinkedHashMap<String, GroupsState.Member> seen = new LinkedHashMap<>();
    for (int i : byTime) {
      GroupRow r = rows.get(i);
      seen.put(FleetText.str(r.member()), new GroupsState.Member(FleetText.str(r.protocol()), r.strategy(), times[i]));
    }
    GroupsState state = prior.merge(seen);
    state = state.bounded(state.latest(), memberTtlMs, (int) Math.min(Integer.MAX_VALUE, maxMembers));
    List<Fleet.Scored> found = new ArrayList<>();
    if (!rows.isEmpty()) {
      String label = FleetText.str(rows.get(0).group());
      GroupsDrift drift = new GroupsDrift(this);
      Map<String, List<String>> before = new HashMap<>();
      for (GroupsDrift.Finding f : drift.assess(prior, label)) {
        before.put(f.rule(), f.signature());
      }
      int row = 0; // the latest push stands for the batch (ties: the last)
      for (int i = 1; i < times.length; i++) {
        if (times[i] >= times[row]) {
          row = i;
        }
      }
      GroupRow chosen = rows.get(row);
      Context context = new Context(null, null, null, null, null, null, chosen.timestampMs(),
          groupSubject(chosen.groupFp()));
      for (GroupsDrift.Finding f : drift.assess(state, label)) {
        if (!Objects.equals(before.get(f.rule()), f.signature())) {
          found.add(new Fleet.Scored(new RawFinding(f.rule(), f.keys(), f.message(), f.evidence()), context));
        }
      }
    }
    return new Fleet.Result(found, state.toJson());
  }
}
