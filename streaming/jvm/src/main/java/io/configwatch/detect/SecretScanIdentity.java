package io.configwatch.detect;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;

/**
 * Client-id conventions for one string: the twin of {@code udfs.rules.identity.split_identity} (a
 * distinguished name's {@code CN=} assignments become {@code CN }, a separator) and
 * {@code strip_structure} (a compound id without its UUIDs and structured segments, the rest joined;
 * any other token unchanged).
 */
final class SecretScanIdentity implements Serializable {
  private static final long serialVersionUID = 1L;

  private final SecretScanRegex uuid;
  private final SecretScanRegex compoundId;
  private final SecretScanRegex separators;
  private final String join;
  private final SecretScanRe2.Rewrite uuidReplacement;
  private final SecretScanRegex structuredSegment;
  private final SecretScanRegex dnAttribute;
  private final SecretScanRe2.Rewrite dnReplacement;

  SecretScanIdentity(JsonNode section, int longText) {
    uuid = new SecretScanRegex(section.get("uuid").asText(), longText);
    compoundId = new SecretScanRegex(section.get("compound_id").asText(), longText);
    separators = new SecretScanRegex(section.get("segment_separators").asText(), longText);
    join = section.get("segment_join").asText();
    uuidReplacement = SecretScanRe2.Rewrite.parse(join);
    structuredSegment = new SecretScanRegex(section.get("structured_segment").asText(), longText);
    dnAttribute = new SecretScanRegex(section.get("dn_attribute").asText(), longText);
    dnReplacement = SecretScanRe2.Rewrite.parse(section.get("dn_replacement").asText());
  }

  /** {@code split_identity} of one value. */
  String splitIdentity(String value) {
    return dnAttribute.replaceAll(value, dnReplacement);
  }

  /** {@code strip_structure} of one token. */
  String stripStructure(String token) {
    if (!compoundId.found(token)) {
      return token;
    }
    StringBuilder rest = new StringBuilder(token.length());
    for (String segment : separators.split(uuid.replaceAll(token, uuidReplacement))) {
      if (!structuredSegment.found(segment)) {
        if (rest.length() > 0) {
          rest.append(join);
        }
        rest.append(segment);
      }
    }
    return rest.toString();
  }
}
