package io.configwatch.detect;

import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Expectations: {"b64": a raw record, "now_ms": n} -> {"name": the first failing expectation or null (null too
 * for a record the decoder refuses), "reason", "detail", "row"} (the record's after apply). Both engines have been
 * serialized and read back.
 */
public final class ExpectationsProbe {
  private ExpectationsProbe() {}

  public static void main(String[] args) throws Exception {
    Object[] engines = new Object[2];
    Probes.run(args, (knowledge, keyed, input) -> {
      if (engines[0] == null) {
        engines[0] = DecoderProbe.roundTrip(Decoder.of(knowledge));
        engines[1] = DecoderProbe.roundTrip(Expectations.of(knowledge));
      }
      Decoder decoder = (Decoder) engines[0];
      Expectations expectations = (Expectations) engines[1];
      String b64 = Probes.text(input, "b64");
      DecodedEvent event = decoder.decode(b64 == null ? null : Base64.getDecoder().decode(b64));
      long now = input.get("now_ms").asLong();
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("name", event.valid() ? expectations.firstFailure(event, now) : null);
      DecodedEvent applied = expectations.apply(event, now);
      out.put("reason", applied.reason());
      out.put("detail", applied.detail());
      out.put("row", applied.row());
      return out;
    });
  }
}
