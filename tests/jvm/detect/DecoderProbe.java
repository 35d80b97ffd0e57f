package io.configwatch.detect;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decoder: {"b64": base64 of a raw record, or null} -> {"reason", "detail", "size_bytes", "row"};
 * {"bench": [base64, ...], "rounds": n} -> {"records", "seconds", "valid"} (records decoded, wall time). The
 * decoder used has been serialized and read back.
 */
public final class DecoderProbe {
  private DecoderProbe() {}

  /** {@code value} serialized and read back, as Spark ships engine objects to executors. */
  @SuppressWarnings("unchecked")
  static <T extends Serializable> T roundTrip(T value) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(value);
    }
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
      return (T) in.readObject();
    }
  }

  public static void main(String[] args) throws Exception {
    Decoder[] decoder = new Decoder[1];
    Probes.run(args, (knowledge, keyed, input) -> {
      if (decoder[0] == null) {
        decoder[0] = roundTrip(Decoder.of(knowledge));
      }
      if (input.has("bench")) {
        List<byte[]> raws = new ArrayList<>();
        for (var item : input.get("bench")) {
          raws.add(Base64.getDecoder().decode(item.asText()));
        }
        int rounds = input.get("rounds").asInt();
        long valid = 0;
        long started = System.nanoTime();
        for (int r = 0; r < rounds; r++) {
          for (byte[] raw : raws) {
            valid += decoder[0].decode(raw).valid() ? 1 : 0;
          }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("records", (long) rounds * raws.size());
        out.put("seconds", (System.nanoTime() - started) / 1e9);
        out.put("valid", valid);
        return out;
      }
      String b64 = Probes.text(input, "b64");
      DecodedEvent event = decoder[0].decode(b64 == null ? null : Base64.getDecoder().decode(b64));
      Map<String, Object> out = new LinkedHashMap<>();
      out.put("reason", event.reason());
      out.put("detail", event.detail());
      out.put("size_bytes", event.sizeBytes());
      out.put("row", event.row());
      return out;
    });
  }
}
