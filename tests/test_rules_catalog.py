"""The rule catalog, docs/rules.md in step with it, alert ids, and the findings table."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from configwatch.contract import SEVERITIES
from configwatch.records import Finding
from configwatch.secrets import SecretStr
from tests.rules_helpers import JAVA, KEY, NOW_MS, entry, findings, push, table
from udfs import sensitivity
from udfs.rules import docgen
from udfs.rules.catalog import CATALOG, Rule, rule
from udfs.rules.detect import detect
from udfs.rules.exceptions import RulesError
from udfs.rules.findings import FINDING_SCHEMA, alert_id, contract_json, from_contract_json, to_findings


def test_docs_rules_md_is_generated_from_the_catalog() -> None:
    assert docgen.DOC_PATH.read_text() == docgen.render(), "run: python -m udfs.rules.docgen"
    assert docgen.main(["--check"]) == 0


def test_docgen_check_fails_on_a_stale_file(tmp_path: object) -> None:
    from pathlib import Path

    stale = Path(str(tmp_path)) / "rules.md"
    stale.write_text("# old\n")
    assert docgen.main(["--check", "--path", str(stale)]) == 1


def test_every_rule_is_documented_with_source_and_rationale() -> None:
    text = docgen.render()
    for r in CATALOG:
        assert f"`{r.id}`" in text and r.rationale in text and r.source in text
        assert r.severity in SEVERITIES and r.keys


def test_the_kip_rules_come_from_the_shared_sensitivity_module() -> None:
    kip_ids = {sensitivity.RULE_TYPE, sensitivity.RULE_PREFIX, sensitivity.RULE_INFIX, sensitivity.RULE_SUFFIX,
               sensitivity.RULE_CUSTOM}
    assert kip_ids <= {r.id for r in CATALOG}
    assert all(rule(i).kind == "sensitive_leak" for i in kip_ids)


def test_unknown_rule_and_bad_definitions_are_errors() -> None:
    with pytest.raises(RulesError):
        rule("no-such-rule")
    with pytest.raises(RulesError):
        Rule("x", "anomaly", "urgent", ("k",), "r", "s")
    with pytest.raises(RulesError):
        Rule("x", "weird", "low", ("k",), "r", "s")


def test_alert_id_is_deterministic_and_order_free_in_keys() -> None:
    a = alert_id("anomaly", "acks-zero", "subj", ["b", "a"], KEY)
    assert a == alert_id("anomaly", "acks-zero", "subj", ["a", "b"], KEY) and len(a) == 32
    assert a != alert_id("anomaly", "acks-zero", "other", ["a", "b"], KEY)
    assert a != alert_id("anomaly", "acks-zero", "subj", ["a", "b"], SecretStr("another-deployment"))


def test_the_same_finding_on_the_same_client_keeps_its_alert_id() -> None:
    p = push({"acks": "0"})
    first = {r["rule"]: r["alert_id"] for r in findings(p)}
    replay = {r["rule"]: r["alert_id"] for r in findings(dict(p, timestamp_ms=int(str(p["timestamp_ms"])) + 5))}
    assert first == replay
    other_client = {r["rule"]: r["alert_id"] for r in findings(dict(p, client_instance_id="another"))}
    assert set(first.values()).isdisjoint(other_client.values())


def test_subject_falls_back_to_client_id_then_connection() -> None:
    base = push({"acks": "0"}, client_instance_id=None)
    ids = {r["alert_id"] for r in findings(base)}
    assert ids == {r["alert_id"] for r in findings(dict(base, connection_id="elsewhere"))}
    assert ids.isdisjoint({r["alert_id"] for r in findings(dict(base, client_id="other"))})


def test_findings_table_matches_the_contract() -> None:
    out = detect(table(push({"acks": "0", "enable.idempotence": "false"}, JAVA)), KEY, NOW_MS)
    assert out.schema == FINDING_SCHEMA
    [finding] = to_findings(out)
    assert isinstance(finding, Finding)
    assert finding.detected_at_ms == NOW_MS and finding.event_timestamp_ms is not None
    assert Finding.from_json(finding.to_json()) == finding
    assert json.loads(finding.to_json())["evidence"] == {"values": {"acks": 0}, "defaulted": []}
    assert finding.rule == "acks-zero" and finding.keys == ("acks",)


def test_contract_json_is_the_findings_record_and_reads_back() -> None:
    out = detect(table(push({"acks": "0", "client.id": "zähler", "bootstrap.servers": "https://b:9092"}, JAVA,
                            client_id="zähler-“1”")), KEY, NOW_MS)
    texts = contract_json(out)
    assert len(texts) == out.num_rows >= 2
    for text, finding in zip(texts, to_findings(out), strict=True):
        assert json.loads(text) == json.loads(finding.to_json())
        assert list(json.loads(text)) == FINDING_SCHEMA.names  # the contract's field order
    assert from_contract_json(texts).equals(out)


def test_empty_and_config_less_batches() -> None:
    assert detect(table(push([])), KEY, NOW_MS).num_rows == 0
    empty = table(push([entry("acks", "0")])).slice(0, 0)
    assert detect(empty, KEY, NOW_MS).schema == FINDING_SCHEMA


def test_pandas_input_is_accepted() -> None:
    frame = table(push({"acks": "0", "enable.idempotence": "false"})).to_pandas()
    assert [r["rule"] for r in detect(frame, KEY, NOW_MS).to_pylist()] == ["acks-zero"]


def test_missing_configs_column_is_a_clear_error() -> None:
    with pytest.raises(RulesError, match="configs"):
        detect(pa.table({"client_id": ["x"]}), KEY, NOW_MS)
