"""Security posture rules over connection events: what the gateway saw of TLS and SASL per connection.

A compliant client never pushes ``security.*``, ``ssl.*`` or ``sasl.*`` keys (the KIP holds them
sensitive), so posture is judged from the connection itself: each ``connection_opened`` carries
its ``security_protocol``, ``tls_version`` and ``sasl_mechanism``, and a plaintext gateway told
where TLS is offered (``--gateway-tls-offered-at``) names it as ``tls_offered_at`` (``docs/contract.md``). The
rules (ids, severities and sources in ``udfs.rules.catalog``) are Arrow masks over a batch of
events; only the rows they match become findings, with the same identity masking, subject and
deterministic ``alert_id`` as every other finding, so one client's connections give one id.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

from configwatch.contract import CONNECTION_OPENED, SCHEMA_VERSION
from configwatch.secrets import SecretStr, fingerprint
from udfs.rules.batch import IDENTITY_FIELDS, SUBJECT_FALLBACKS
from udfs.rules.catalog import rule
from udfs.rules.findings import alert_id
from udfs.sensitivity import masked_identities

__all__ = ["POSTURE_RULES", "posture_findings"]

WEAK_TLS: Final = ("SSLv2", "SSLv3", "TLSv1", "TLSv1.1")
_EVIDENCE: Final = ("security_protocol", "tls_version", "tls_cipher", "sasl_mechanism", "client_certificate",
                    "tls_offered_at")

Mask = Callable[[pa.Table], pa.ChunkedArray | pa.Array]


def _column(events: pa.Table, name: str) -> pa.ChunkedArray | pa.Array:
    return events.column(name) if name in events.column_names else pa.nulls(events.num_rows, pa.string())


def _sasl_plaintext(events: pa.Table) -> pa.ChunkedArray | pa.Array:
    return pc.equal(_column(events, "security_protocol"), "SASL_PLAINTEXT")


# Rule id (udfs.rules.catalog: severity, keys, rationale) -> the events it flags. The most severe first: an
# event gets one finding, its first rule's.
POSTURE_RULES: Final[dict[str, Mask]] = {
    "posture-plain-over-plaintext":
        lambda e: pc.and_(_sasl_plaintext(e), pc.equal(_column(e, "sasl_mechanism"), "PLAIN")),
    "posture-weak-tls": lambda e: pc.is_in(_column(e, "tls_version"), pa.array(WEAK_TLS)),
    "posture-sasl-over-plaintext":
        lambda e: pc.and_(_sasl_plaintext(e), pc.not_equal(_column(e, "sasl_mechanism"), "PLAIN")),
    "posture-plaintext-tls-offered":
        lambda e: pc.and_(pc.equal(_column(e, "security_protocol"), "PLAINTEXT"),
                          pc.is_valid(_column(e, "tls_offered_at"))),
}


def posture_findings(events: pa.Table, key: SecretStr, now_ms: int) -> tuple[list[str], list[str]]:
    """Alert ids and contract JSON findings of the weak posture among ``events`` (decoded, valid)."""
    opened = events.filter(pc.fill_null(pc.equal(events.column("event"), CONNECTION_OPENED), False))
    if opened.num_rows == 0:
        return [], []
    flagged: dict[int, str] = {}
    for rule_id, mask in POSTURE_RULES.items():
        for row in pc.indices_nonzero(pc.fill_null(mask(opened), False)).to_pylist():
            flagged.setdefault(row, rule_id)
    if not flagged:
        return [], []
    rows = sorted(flagged)
    chosen = opened.take(pa.array(rows, pa.int64()))
    identity = {name: masked_identities(_column(chosen, name).to_pylist(), key) for name in IDENTITY_FIELDS}
    raw_subjects = [next((v for v in (_column(chosen, f)[i].as_py() for f in SUBJECT_FALLBACKS) if v), "")
                    for i in range(chosen.num_rows)]
    evidence = {name: _column(chosen, name).to_pylist() for name in _EVIDENCE}
    times = chosen.column("timestamp_ms").to_pylist()
    ids, values = [], []
    for i, row in enumerate(rows):
        entry = rule(flagged[row])
        finding_id = alert_id(entry.kind, entry.id, fingerprint(raw_subjects[i], key), entry.keys, key)
        record = {
            "schema_version": SCHEMA_VERSION, "alert_id": finding_id, "kind": entry.kind, "rule": entry.id,
            "severity": entry.severity, "keys": list(entry.keys),
            **{name: identity[name][i] for name in IDENTITY_FIELDS},
            "message": entry.rationale,
            "evidence": {name: evidence[name][i] for name in _EVIDENCE if evidence[name][i] is not None},
            "event_timestamp_ms": times[i], "detected_at_ms": now_ms,
        }
        ids.append(finding_id)
        values.append(json.dumps(record, separators=(",", ":"), ensure_ascii=False))
    return ids, values
