"""Client-id conventions: which parts of a compound identifier are structure, not secret.

Kafka clients get their names by convention, and the conventions join structured
parts with ``-`` and ``_``:

- Kafka Streams: ``<application.id>-<process UUID>-StreamThread-<n>-consumer``
  (``-restore-consumer``, ``-producer``; ``-<n>_<m>-producer`` per task under EOS-alpha),
  ``...-GlobalStreamThread-global-consumer``, ``<application.id>-<process UUID>-admin``;
- Kafka Connect: ``connector-consumer-<connector>-<task>`` (``connector-producer-``,
  ``connector-dlq-producer-``, ``connector-adminclient-``);
- Spark: ``consumer-spark-kafka-source-<UUID>-<hash>-driver-<n>-<m>``;
- client defaults: ``producer-<n>``, ``consumer-<group>-<n>``, ``kafka-python-producer-<n>``,
  ``rdkafka``; Kubernetes pod names ``<deployment>-<replicaset hash>-<suffix>`` and
  ``<statefulset>-<ordinal>``; host names, build ids, commit shas, versions.

Joined into one token, such an id can mix lower case, upper case and digits at a high
rate (a UUID next to ``StreamThread``) and pass the entropy test of ``secretscan``
although no part of it is random in the credential sense.

``strip_structure`` takes each token that is a compound id (it holds a UUID, a hex
hash or number of 7+ characters, a Kubernetes replicaset-hash and suffix pair, or a
segment Kafka's naming conventions write, such as ``StreamThread`` or ``consumer``)
and removes its structured segments: UUIDs; segments of digits and lower case, or
digits and upper case (numbers, hashes, lower-case words); words in Capitalized or
camelCase form with optional trailing digits. What mixes character classes inside
one segment stays, so a random token placed in an id is still tested. A token
without such an anchor is left whole: a random base64url token can contain ``-`` and
``_``, and its short pieces often look like words by chance. Vectorized over an
Arrow array; no Python loop per token.
"""

from __future__ import annotations

from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["COMPOUND_ID", "CONNECT_PRODUCER", "DN_ATTRIBUTE", "DN_REPLACEMENT", "SEGMENT_JOIN",
           "SEGMENT_SEPARATORS", "STREAMS_PRODUCER", "STRUCTURED_SEGMENT", "UUID", "split_identity",
           "strip_structure"]

_HEX_LOWER, _HEX_UPPER = "[0-9a-f]", "[0-9A-F]"
_POD = "[bcdfghjklmnpqrstvwxz2-9]"  # the alphabet Kubernetes draws generated name parts from
UUID: Final = "|".join(f"{h}{{8}}-{h}{{4}}-{h}{{4}}-{h}{{4}}-{h}{{12}}" for h in (_HEX_LOWER, _HEX_UPPER))
SEGMENT_SEPARATORS: Final = "[-_]"
# The client ids of the producers Kafka Connect creates and configures itself, MirrorMaker 2's included: a task's
# (Worker: connector-producer-<connector>-<task>, its dead-letter queue's connector-dlq-producer-...) and the
# worker's own, which write its internal topics (<client id base>offsets, statuses, configs and the exactly-once
# leader's configs-leader; ConnectUtils.clientIdBase ends in "-").
CONNECT_PRODUCER: Final = "^connector-(?:dlq-)?producer-|-(?:offsets|statuses|configs(?:-leader)?)$"
# The client ids of the producers Kafka Streams creates (a thread's, or a task's under exactly-once alpha); under
# exactly-once v2 their transactional.id holds the process UUID on purpose.
STREAMS_PRODUCER: Final = r"-StreamThread-\d+(?:-\d+_\d+)?-producer$"
SEGMENT_JOIN: Final = "-"  # what a UUID leaves behind, and what joins the segments kept
# Segments Kafka clients, Streams, Connect and Spark write into the ids they generate.
_CONVENTION_WORDS = ("StreamThread", "GlobalStreamThread", "StateUpdater", "consumer", "producer", "restore",
                     "admin", "adminclient", "connector", "connect", "spark", "kafka", "rdkafka", "driver",
                     "executor", "build", "release", "SNAPSHOT")
_ANCHOR = "|".join((f"{_HEX_LOWER}{{7,}}", f"{_HEX_UPPER}{{7,}}", f"{_POD}{{8,10}}-{_POD}{{5}}", *_CONVENTION_WORDS))
COMPOUND_ID: Final = f"{UUID}|(?:^|[-_])(?:{_ANCHOR})(?:[-_]|$)"
STRUCTURED_SEGMENT: Final = "^(?:" + "|".join((
    "[0-9a-z]*",                              # numbers, lower-case words, hex, Kubernetes hashes, base36 ids
    "[0-9A-Z]*",                              # acronyms, upper-case hex, SNAPSHOT, RC1
    "[A-Z]*[a-z]*(?:[A-Z][a-z]{2,})*[0-9]*",  # StreamThread, GlobalStreamThread, camelCase, Consumer2024
)) + ")$"

# An RFC 4514 attribute type (a keyword such as CN, OU, DC, UID, or a dotted OID) and its "=", where an RDN starts.
DN_ATTRIBUTE: Final = r"(^|[,+;:/\s])\s*([A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)+)="
DN_REPLACEMENT: Final = r"\1\2 "  # the attribute type, then a separator where its "=" was


def split_identity(values: pa.Array) -> pa.Array:
    """``values`` with every distinguished-name attribute assignment (``CN=``) turned into ``CN `` (a separator)."""
    return pc.replace_substring_regex(values, pattern=DN_ATTRIBUTE, replacement=DN_REPLACEMENT)


def strip_structure(tokens: pa.Array) -> pa.Array:
    """Each compound-id token without its UUIDs and structured segments, the rest joined by ``-``.

    Any other token comes back unchanged; a compound id made only of structure comes
    back empty; nulls stay null.
    """
    filled = pc.fill_null(tokens, "")
    compound = pc.match_substring_regex(filled, COMPOUND_ID).to_numpy(zero_copy_only=False)
    if not compound.any():
        return tokens
    idx = pa.array(np.flatnonzero(compound))
    without_uuids = pc.replace_substring_regex(filled.take(idx), pattern=UUID, replacement=SEGMENT_JOIN)
    split = pc.split_pattern_regex(without_uuids, pattern=SEGMENT_SEPARATORS)
    segments = pc.list_flatten(split)
    keep = ~pc.match_substring_regex(segments, STRUCTURED_SEGMENT).to_numpy(zero_copy_only=False)
    kept = np.bincount(pc.list_parent_indices(split).to_numpy()[keep], minlength=len(idx))
    offsets = pa.array(np.concatenate(([0], np.cumsum(kept))), pa.int32())
    rest = pc.binary_join(pa.ListArray.from_arrays(offsets, segments.filter(pa.array(keep))), SEGMENT_JOIN)
    out = pc.replace_with_mask(filled, pa.array(compound), rest)
    return pc.if_else(pc.is_null(tokens), pa.scalar(None, pa.string()), out) if tokens.null_count else out
