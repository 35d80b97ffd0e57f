"""Every quarantine verdict of decoding (contract section 3): its reason code and sentence, once.

A :class:`Verdict` is a template pair over named parts (``{field}``, ``{expected}``, ...);
``udfs.classify`` and ``configwatch.records.validate_event`` raise them as
:class:`~configwatch.errors.ContractError`. A quarantine record carries the reason and the
sentence, never the payload.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from configwatch.errors import ContractError

__all__ = ["Verdict"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """A reason code and its sentence, both ``str.format`` templates over the same named parts."""

    reason: str
    detail: str

    def error(self, **parts: str) -> ContractError:
        """The verdict for these parts, raisable."""
        return ContractError(self.reason.format(**parts), self.detail.format(**parts))


NO_VALUE: Final = Verdict("not_json", "the record has no value")
NOT_UTF8: Final = Verdict("not_json", "the record is not UTF-8 text")
NOT_JSON: Final = Verdict("not_json", "the record is not valid JSON")
TOO_DEEP: Final = Verdict("not_json", "the record nests too deeply to be read")
LONE_SURROGATE: Final = Verdict("not_json", "the record escapes an unpaired UTF-16 surrogate (not Unicode text)")
NOT_OBJECT: Final = Verdict("not_object", "the record is JSON but not an object")
MISSING_FIELD: Final = Verdict("missing_field:{field}", "{field} is required")
OUT_OF_RANGE: Final = Verdict("wrong_type:{field}", "{field} is outside the int64 range")
WRONG_TYPE: Final = Verdict("wrong_type:{field}", "{field} must be {expected}, got {got}")
ITEM_NOT_OBJECT: Final = Verdict("wrong_type:{field}[]", "each {field} entry must be an object")
BAD_SCHEMA_VERSION: Final = Verdict("bad_schema_version", "schema_version must be {version}")
UNKNOWN_EVENT: Final = Verdict("unknown_event", "event is not one of {events}")
BAD_SOFTWARE: Final = Verdict("bad_software_{part}", "{field} breaks the KIP-511 pattern")
MISSING_CONFIGS: Final = Verdict("missing_field:configs", "configs is required for config_push")
CONFIGS_NOT_ARRAY: Final = Verdict("wrong_type:configs", "configs must be an array")
ENTRY_NOT_OBJECT: Final = Verdict("wrong_type:configs[]", "each configs entry must be an object")
ENTRY_WITHOUT_KEY: Final = Verdict("missing_field:configs[].key", "a configs entry lacks key")
BAD_CONFIG_TYPE: Final = Verdict("bad_config_type", "configs[].type is not a ConfigDef.Type name")
MISSING_CONNECTION: Final = Verdict("missing_field:connection_id", "connection events need connection_id")
NOT_UTF8_JSON: Final = Verdict("not_json", "the record is not UTF-8 JSON")  # Event.from_json's one verdict
