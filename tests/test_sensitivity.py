"""The KIP's sensitivity rules: scalar and vectorized forms agree, positives and negatives."""

from __future__ import annotations

import pyarrow as pa
import pytest

from udfs.sensitivity import (
    RULE_INFIX,
    RULE_PREFIX,
    RULE_SUFFIX,
    RULE_TYPE,
    kip_sensitive_reason,
    kip_sensitive_rules,
)

CASES = [
    ("sasl.jaas.config", "PASSWORD", RULE_TYPE),
    ("key.serializer", "CLASS", RULE_TYPE),
    ("sasl.mechanism", "STRING", RULE_PREFIX),
    ("security.protocol", "STRING", RULE_PREFIX),
    ("ssl.truststore.location", "STRING", RULE_PREFIX),
    ("producer.ssl.keystore.location", "STRING", RULE_INFIX),
    ("admin.sasl.kerberos.service.name", "STRING", RULE_INFIX),
    ("consumer.security.providers", "LIST", RULE_INFIX),
    ("partitioner.class", "STRING", RULE_SUFFIX),
    ("interceptor.classes", "LIST", RULE_SUFFIX),
    ("acks", "STRING", None),
    ("linger.ms", "LONG", None),
    ("classic.setting", "STRING", None),
    ("myssl.thing", "STRING", None),
    ("ssl", "STRING", None),
]


@pytest.mark.parametrize(("key", "type_name", "rule"), CASES)
def test_scalar_rules(key: str, type_name: str, rule: str | None) -> None:
    assert kip_sensitive_reason(key, type_name) == rule


def test_vectorized_rules_agree_with_scalar() -> None:
    keys = pa.array([c[0] for c in CASES] + [None])
    types = pa.array([c[1] for c in CASES] + [None])
    masks = {rule: mask.to_pylist() for rule, mask in kip_sensitive_rules(keys, types).items()}
    for i, (key, type_name, _) in enumerate(CASES):
        hits = [rule for rule, mask in masks.items() if mask[i]]
        first = kip_sensitive_reason(key, type_name)
        assert (first is None) == (not hits), key
        if first is not None:
            assert first in hits
    assert not any(mask[-1] for mask in masks.values())  # nulls are never sensitive
