"""Generate ``docs/rules.md`` from the rule catalog and the known-key data files.

Usage::

    python -m udfs.rules.docgen            # rewrite docs/rules.md
    python -m udfs.rules.docgen --check    # exit 1 when docs/rules.md is out of step

A test (``tests/test_rules_catalog.py``) asserts the committed file equals ``render()``.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path

from udfs.rules.catalog import ANOMALY, CATALOG, POSTURE, SENSITIVE_LEAK, Rule
from udfs.rules.keysets import profile

__all__ = ["DOC_PATH", "main", "render"]

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "rules.md"

_INTRO = """\
# Detection rules

Generated from `udfs/rules/catalog.py` by `python -m udfs.rules.docgen`; do not edit
by hand (a test keeps this file and the catalog in step).

Every finding (record contract, section 2) carries one of these rule ids. Its
`alert_id` is an HMAC-SHA256, under the deployment's fingerprint key, of kind, rule,
subject (the fingerprint of `client_instance_id`, else `client_id`, else
`connection_id`; for a consumer-group rule the group, `group:<fingerprint of group.id>`,
so a group gets one alert however many members) and the finding's sorted keys: the same finding on the same client
keeps its id across restarts and replays. Findings never hold a sensitive value:
flagged values appear in `evidence` as fingerprints (`configwatch.secrets.fingerprint`),
and a key name, client id or principal that itself holds a secret is replaced by
`redacted:<fingerprint>` everywhere in the finding.

`Keys read` `*` means the rule reads every entry of a push.
"""

_JUDGING = """\
## How defaults are judged

A key the client did not send takes the documented default of the client's
profile: its software family (KIP-511 `client_software_name`, mapped by
`udfs/rules/data/families.json`), the key set of its version, the defaults of its
release (`udfs/rules/data/defaults.json`: Java `acks` 1 before 3.0, `retries` 0 before
2.1, `enable.idempotence` true from 3.0, each with its source), and its role inferred
from role-exclusive keys in the push (producer, consumer, admin, Streams; `unknown`
when mixed or when one config serves every role, as in sarama and franz-go, which
keeps only defaults all roles agree on). A redacted value stays unknown, so no rule
fires on it. Where the client adjusts a value itself the rules judge what it will
actually run with: the Java producer from 3.0.1 and 3.1.1 (and kafka-python 3) turns
its default idempotence off when the user sets a conflicting acks, retries or
max.in.flight, while 3.0.0 and 3.1.0 applied the default only when set (KAFKA-13598);
the Java producer raises a default `delivery.timeout.ms`; librdkafka adjusts acks,
retries and max.in.flight for idempotence unless the user set them; under
`group.protocol=consumer` the classic-protocol session and heartbeat rules do not apply.

Every family has a key set in its own naming style (Java and librdkafka dotted keys,
kafka-python keyword arguments, sarama `Config` field paths, franz-go option names),
so a key outside it is custom configuration for any of them. The anomaly rules read
Java's keys; a family with other names maps them where its own documentation gives a
setting the same meaning (`java_equivalents` in its data file: kafka-python
`session_timeout_ms`, sarama `Producer.RequiredAcks`, franz-go `SessionTimeout`), and
sarama's and franz-go's `time.Duration` values (`9s`, `1m30s`, `500ms`) are read in
milliseconds. Typos are reported only
for families that ignore unknown keys (Java): librdkafka and kafka-python refuse to
start with one and Go code cannot name one. Clients below ApiVersions v3 (no software
name) get no typo findings; a key known to no family counts as custom for them.
"""


def _row(rule: Rule) -> str:
    keys = ", ".join(f"`{k}`" for k in rule.keys)
    stateful = " (stateful)" if rule.stateful else ""
    return (f"| `{rule.id}`{stateful} | {rule.severity} | {keys} | {rule.clients} | {rule.rationale} | "
            f"{rule.source} |")


_POSTURE_INTRO = ("Judged from each `connection_opened` the gateway publishes (its `security_protocol`, "
                  "`tls_version` and `sasl_mechanism`), not from pushed keys: a compliant client never pushes "
                  "`security.*`, `ssl.*` or `sasl.*` (`udfs/rules/posture.py`). One finding per connection, "
                  "its most severe rule's; one client's connections share one `alert_id`.")


def _table(kind: str) -> list[str]:
    lines = ["| rule | severity | keys read | clients and releases | rationale | source |",
             "|---|---|---|---|---|---|"]
    return lines + [_row(r) for r in CATALOG if r.kind == kind]


def _key_sets() -> list[str]:
    families = json.loads(resources.files("udfs.rules").joinpath("data").joinpath("families.json").read_text())
    lines = ["## Known key sets", "",
             "| family | software names | key set files | keys per role |", "|---|---|---|---|"]
    for fam in families["families"]:
        names = ", ".join(f"`{n}`" for n in fam["names"]) + "".join(f", `{p}*`" for p in fam["name_prefixes"])
        files, counts = [], []
        for entry in fam["key_sets"]:
            file = entry["file"]
            files.append(f"`{file}` (from {entry['from_version']})")
            doc = json.loads(resources.files("udfs.rules").joinpath("data").joinpath(file).read_text())
            per_role = ", ".join(f"{role} {len(profile(file, role).keys)}" for role in doc["roles"])
            counts.append(f"{doc['version']}: {per_role}")
        lines.append(f"| {fam['family']} | {names} | {'; '.join(files) or 'none'} | "
                     f"{'; '.join(counts) or fam['note']} |")
    lines += ["", "Sources of the data files:", ""]
    seen = set()
    for fam in families["families"]:
        for entry in fam["key_sets"]:
            if entry["file"] in seen:
                continue
            seen.add(entry["file"])
            doc = json.loads(resources.files("udfs.rules").joinpath("data").joinpath(entry["file"]).read_text())
            note = f" Java equivalents: {doc['java_equivalents_note']}" if "java_equivalents_note" in doc else ""
            lines.append(f"- `{entry['file']}`: {doc['source']}{note}")
    return lines


def render() -> str:
    """The full text of ``docs/rules.md``."""
    parts = [_INTRO, "## Sensitive leaks (`kind: sensitive_leak`)", "", *_table(SENSITIVE_LEAK), "",
             "## Anomalies (`kind: anomaly`)", "", *_table(ANOMALY), "",
             "## Security posture (`kind: security_posture`)", "", _POSTURE_INTRO, "", *_table(POSTURE), "",
             _JUDGING, *_key_sets()]
    return "\n".join(parts).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m udfs.rules.docgen", description="generate docs/rules.md")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/rules.md differs from the catalog")
    parser.add_argument("--path", type=Path, default=DOC_PATH, help="output file (default: docs/rules.md)")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.path.read_text() if args.path.exists() else ""
        if current != text:
            print(f"{args.path} is out of step with the rule catalog; run python -m udfs.rules.docgen",
                  file=sys.stderr)
            return 1
        return 0
    args.path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
