package io.configwatch.detect;

import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

/**
 * One push's row of {@code udfs.rules.effective.effective}: the effective value of every rule key (sent,
 * else the profile's documented default; a redacted value stays unknown), read under the Java names
 * through the profile's equivalents: numbers (NaN unknown; Go durations in milliseconds; acks words as
 * numbers), the booleans (null unknown), strings as sent; which keys were sent and which set
 * explicitly ({@code is_default} false); the profile's role and judge and whether its default
 * idempotence yields. A later duplicate entry overwrites an earlier one.
 */
public final class Effective {
  private static final ThreadLocal<Map<Knowledge, EffectiveRules>> RULES =
      ThreadLocal.withInitial(WeakHashMap::new);

  private final EffectiveRules rules;
  private final double[] numbers;
  private final Boolean[] bools;
  private final String[] texts;
  private final boolean[] sent;
  private final boolean[] explicit;
  private final String role;
  private final String judge;
  private final boolean yields;

  private Effective(EffectiveRules rules, double[] numbers, Boolean[] bools, String[] texts, boolean[] sent,
      boolean[] explicit, String role, String judge, boolean yields) {
    this.rules = rules;
    this.numbers = numbers;
    this.bools = bools;
    this.texts = texts;
    this.sent = sent;
    this.explicit = explicit;
    this.role = role;
    this.judge = judge;
    this.yields = yields;
  }

  /** The effective values of one push judged with its profile (null: no profile, keys read as named). */
  public static Effective of(Knowledge knowledge, Push push, Profile profileOrNull) {
    return of(RULES.get().computeIfAbsent(knowledge, EffectiveRules::new), push, profileOrNull);
  }

  static Effective of(EffectiveRules rules, Push push, Profile profile) {
    int k = rules.ruleKeys.length;
    String[] wide = new String[k];
    boolean[] sent = new boolean[k];
    boolean[] explicit = new boolean[k];
    EffectiveRules.PerProfile per = profile == null ? null : rules.of(profile);
    Map<String, Integer> columns = per == null ? rules.column : per.columns();
    List<Entry> entries = push.entries();
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      Integer c = e.key() == null ? null : columns.get(e.key());
      if (c == null) {
        continue;
      }
      wide[c] = e.redacted() ? null : e.value();
      sent[c] = true;
      explicit[c] = !e.isDefault();
    }
    if (per != null) {
      for (int c = 0; c < k; c++) {
        if (!sent[c]) {
          wide[c] = per.defaults()[c];
        }
      }
    }
    double[] numbers = new double[rules.numeric];
    for (int c = 0; c < rules.numeric; c++) {
      numbers[c] = c == rules.acks ? rules.acks(wide[c]) : rules.number(wide[c]);
    }
    if (profile != null && rules.goDurations.equals(profile.durations())) {
      for (int c : rules.msColumns) {
        numbers[c] = rules.go.ms(wide[c]);
      }
    }
    Boolean[] bools = new Boolean[rules.bools];
    for (int b = 0; b < rules.bools; b++) {
      bools[b] = rules.bool(wide[rules.numeric + b]);
    }
    String[] texts = new String[k - rules.numeric - rules.bools];
    System.arraycopy(wide, rules.numeric + rules.bools, texts, 0, texts.length);
    return new Effective(rules, numbers, bools, texts, sent, explicit,
        profile == null ? rules.noProfile : profile.role(), profile == null ? rules.noProfile : profile.judge(),
        profile != null && profile.behaviours().contains(rules.yielding));
  }

  private int column(String ruleKey) {
    int c = rules.columnOf(ruleKey);
    if (c < 0) {
      throw new IllegalArgumentException("no rule key " + ruleKey + " in udfs.rules.effective.RULE_KEYS");
    }
    return c;
  }

  /** The rule keys in {@code RULE_KEYS} order. */
  List<String> ruleKeys() {
    return List.of(rules.ruleKeys);
  }

  /** A numeric rule key's value (NaN: unknown). */
  public double number(String ruleKey) {
    int c = column(ruleKey);
    if (c >= rules.numeric) {
      throw new IllegalArgumentException(ruleKey + " is not a numeric rule key");
    }
    return numbers[c];
  }

  /** A boolean rule key's value (null: unknown). */
  public Boolean bool(String ruleKey) {
    int c = column(ruleKey) - rules.numeric;
    if (c < 0 || c >= rules.bools) {
      throw new IllegalArgumentException(ruleKey + " is not a boolean rule key");
    }
    return bools[c];
  }

  /** A string rule key's value as sent or defaulted (null: unknown). */
  public String text(String ruleKey) {
    int c = column(ruleKey) - rules.numeric - rules.bools;
    if (c < 0) {
      throw new IllegalArgumentException(ruleKey + " is not a string rule key");
    }
    return texts[c];
  }

  /** The value as the typed frame holds it: a Double (NaN unknown), a Boolean or a String (null unknown). */
  public Object value(String ruleKey) {
    int c = column(ruleKey);
    if (c < rules.numeric) {
      return numbers[c];
    }
    return c < rules.numeric + rules.bools ? bools[c - rules.numeric] : texts[c - rules.numeric - rules.bools];
  }

  /** Whether a string rule key is one of {@code STRING_KEYS}. */
  boolean isString(String ruleKey) {
    return column(ruleKey) >= rules.numeric + rules.bools;
  }

  /** The push carried the key (under any of its sources). */
  public boolean sent(String ruleKey) {
    return sent[column(ruleKey)];
  }

  /** The push carried the key with {@code is_default} false: the user set it. */
  public boolean explicit(String ruleKey) {
    return explicit[column(ruleKey)];
  }

  /** The profile's role, or {@code NO_PROFILE}. */
  public String role() {
    return role;
  }

  /** The profile's judge (java, librdkafka, none), or {@code NO_PROFILE}. */
  public String judge() {
    return judge;
  }

  /** Default idempotence gives way to conflicting settings at this release. */
  public boolean yields() {
    return yields;
  }
}
