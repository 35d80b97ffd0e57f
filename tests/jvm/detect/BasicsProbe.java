package io.configwatch.detect;

import java.util.List;

/** PyJson and Keyed: {"repr": x} -> repr(x); {"fingerprint": s}; {"alert_id": [kind, rule, subject, keys]}. */
public final class BasicsProbe {
  private BasicsProbe() {}

  public static void main(String[] args) throws Exception {
    Probes.run(args, (knowledge, keyed, input) -> {
      if (input.has("repr")) {
        return PyJson.floatRepr(input.get("repr").asDouble());
      }
      if (input.has("fingerprint")) {
        return keyed.fingerprint(input.get("fingerprint").asText());
      }
      if (input.has("dumps")) {
        return PyJson.dumps(new com.fasterxml.jackson.databind.ObjectMapper().convertValue(input.get("dumps"),
            Object.class), input.path("sort").asBoolean(false));
      }
      var a = input.get("alert_id");
      return keyed.alertId(a.get(0).asText(), a.get(1).asText(), a.get(2).asText(), Knowledge.strings(a.get(3)));
    });
  }
}
