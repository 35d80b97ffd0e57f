package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

/**
 * Secrets inside one string: the twin of {@code udfs.rules.secretscan.scan} (and
 * {@code scan_identity}) for a single value, with the verdict the vectorized function gives that
 * value in any batch. A value of fewer than the minimum code points, a canonical UUID in one case, or
 * a value failing the prefilter, has no secret; otherwise the first kind (in catalog order) whose
 * pattern finds it names it, unless its first match's secret part is a placeholder; otherwise a
 * random-looking token makes it {@code secret-high-entropy} (identity fields: after their
 * distinguished-name attributes are split).
 * Answers are cached per distinct string.
 */
public final class SecretScan implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int CACHE = 65_536;

  /** One secret kind: its rule, its pattern, the numbers of the groups that hold its secret part (in order). */
  private record Kind(String rule, SecretScanRegex pattern, int[] groups) implements Serializable {}

  private final List<Kind> kinds = new ArrayList<>();
  private final String highEntropyRule;
  private final SecretScanRegex placeholder;
  private final SecretScanRegex prefilter;
  private final int minValueChars;
  private final SecretScanRegex uuid;
  private final int uuidChars;
  private final SecretScanRegex tokenRun;
  private final SecretScanRegex tokenSplit;
  private final int entropyMinLen;
  private final String certificate;
  private final SecretScanEntropy entropy;
  private final SecretScanIdentity identity;
  private transient SecretScanCache values;
  private transient SecretScanCache identities;

  private SecretScan(Knowledge knowledge, int longText) {
    JsonNode s = knowledge.section("secretscan");
    List<String> groupNames = Knowledge.strings(s.get("secret_groups"));
    for (JsonNode k : s.get("kinds")) {
      SecretScanRegex pattern = new SecretScanRegex(k.get("pattern").asText(), longText);
      List<Integer> groups = new ArrayList<>();
      if (k.get("secret_group").asBoolean()) {
        for (String g : groupNames) {
          if (k.get("pattern").asText().contains("(?P<" + g + ">")) {
            groups.add(pattern.group(g));
          }
        }
      }
      kinds.add(new Kind(k.get("rule").asText(), pattern, groups.stream().mapToInt(Integer::intValue).toArray()));
    }
    highEntropyRule = s.get("high_entropy").asText();
    placeholder = new SecretScanRegex(s.get("placeholder").asText(), longText);
    prefilter = new SecretScanRegex(s.get("prefilter").asText(), longText);
    minValueChars = s.get("min_value_chars").asInt();
    uuid = new SecretScanRegex(s.get("uuid").asText(), longText);
    uuidChars = s.get("uuid_chars").asInt();
    tokenRun = new SecretScanRegex(s.get("token_run").asText(), longText);
    tokenSplit = new SecretScanRegex(s.get("token_split").asText(), longText);
    entropyMinLen = s.get("entropy_min_len").asInt();
    certificate = s.get("certificate").asText();
    entropy = new SecretScanEntropy(s);
    identity = new SecretScanIdentity(knowledge.section("identity"), longText);
  }

  public static SecretScan of(Knowledge knowledge) {
    return new SecretScan(knowledge, SecretScanRegex.LONG_TEXT);
  }

  /** A scan whose texts go to RE2J above {@code longText} UTF-16 units (tests: 0 all, MAX_VALUE none). */
  static SecretScan of(Knowledge knowledge, int longText) {
    return new SecretScan(knowledge, longText);
  }

  /** udfs.rules.secretscan.scan for one string: the rule id of the first secret kind found, or null (null in, null out). */
  public String scan(String value) {
    if (values == null) {
      values = new SecretScanCache(CACHE, v -> judge(v, false));
    }
    return cheapMiss(value) ? null : values.get(value);
  }

  /** scan(..., identity=True): distinguished-name attributes split before the entropy test. */
  public String scanIdentity(String value) {
    if (identities == null) {
      identities = new SecretScanCache(CACHE, v -> judge(v, true));
    }
    return cheapMiss(value) ? null : identities.get(value);
  }

  /**
   * Null, too short by UTF-16 length (a code point takes at least one unit), or a one-case canonical UUID
   * (a client instance id: one per connection event, mostly distinct): no secret, nothing to cache.
   */
  private boolean cheapMiss(String value) {
    return value == null || value.length() < minValueChars || value.length() == uuidChars && uuid.found(value);
  }

  private String judge(String value, boolean identityField) {
    if (value.codePointCount(0, value.length()) < minValueChars || !prefilter.found(value)) {
      return null;
    }
    for (Kind kind : kinds) {
      SecretScanRegex.Match m = kind.pattern().first(value);
      if (m == null || kind.groups().length > 0 && placeholderOnly(m, kind.groups())) {
        continue;
      }
      return kind.rule();
    }
    return highEntropy(identityField ? identity.splitIdentity(value) : value) ? highEntropyRule : null;
  }

  /** The first match's secret part (the first non-empty named group) is missing or a placeholder. */
  private boolean placeholderOnly(SecretScanRegex.Match m, int[] groups) {
    for (int g : groups) {
      String part = m.group(g);
      if (part != null && !part.isEmpty()) {
        return placeholder.found(part);
      }
    }
    return true;
  }

  /** {@code _high_entropy} of one value: a token, once its compound-id structure is out, looks random. */
  private boolean highEntropy(String value) {
    if (!tokenRun.found(value) || value.contains(certificate)) {
      return false;
    }
    for (String token : tokenSplit.split(value)) {
      if (codePoints(token) >= entropyMinLen) {
        String rest = identity.stripStructure(token);
        if (codePoints(rest) >= entropyMinLen && entropy.randomLike(rest)) {
          return true;
        }
      }
    }
    return false;
  }

  private static int codePoints(String s) {
    return s.codePointCount(0, s.length());
  }

  /** The parts the probes compare one by one with Python's. */
  SecretScanIdentity identity() {
    return identity;
  }

  SecretScanEntropy entropy() {
    return entropy;
  }
}
