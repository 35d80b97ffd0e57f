package io.configwatch.detect;

import java.util.ArrayList;
import java.util.List;

/**
 * EffectiveText over every code point: {"space": true} -> the code points str.isspace (and Arrow's
 * utf8_trim_whitespace) treats as white space; {"lower": true} -> [code point, utf8_lower of it] wherever
 * lower-casing changes it; {"numbers": [texts]} and {"acks": [texts]} -> reprs of the parsed values.
 */
public final class EffectiveProbe {
  private EffectiveProbe() {}

  public static void main(String[] args) throws Exception {
    EffectiveRules[] rules = new EffectiveRules[1];
    Probes.run(args, (knowledge, keyed, in) -> {
      if (rules[0] == null) {
        rules[0] = new EffectiveRules(knowledge);
      }
      List<Object> out = new ArrayList<>();
      if (in.has("space")) {
        for (int cp = 0; cp <= Character.MAX_CODE_POINT; cp++) {
          if ((cp < 0xd800 || cp > 0xdfff) && EffectiveText.isSpace(cp)) {
            out.add((long) cp);
          }
        }
      } else if (in.has("lower")) {
        for (int cp = 0; cp <= Character.MAX_CODE_POINT; cp++) {
          String s = new String(Character.toChars(cp));
          String low = EffectiveText.arrowLower(s);
          if ((cp < 0xd800 || cp > 0xdfff) && !low.equals(s)) {
            out.add(List.of((long) cp, low));
          }
        }
      } else if (in.has("numbers")) {
        for (String t : Knowledge.strings(in.get("numbers"))) {
          out.add(AnomaliesProbe.repr(rules[0].number(t)));
        }
      } else {
        for (String t : Knowledge.strings(in.get("acks"))) {
          out.add(AnomaliesProbe.repr(rules[0].acks(t)));
        }
      }
      return out;
    });
  }
}
