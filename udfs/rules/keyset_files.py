"""Write a family's generated key sets, one file per release line, and their entries in ``families.json``.

The generators (``generate_keysets`` for the Java client from its jars,
``generate_rdkafka_keysets`` for librdkafka from its ``CONFIGURATION.md``) build the
documents; this module names, renders, compares and writes them, so both lay out
the data the same way.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

__all__ = ["DATA", "file_name", "render", "role_differences", "write"]

log = logging.getLogger(__name__)

DATA: Final = Path(__file__).resolve().parent / "data"


def file_name(family: str, line: str) -> str:
    return f"{family}-{line}.json"


def render(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=1, sort_keys=False) + "\n"


def role_differences(a: Mapping[str, Mapping[str, Any]], b: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Per role of ``a``: the keys whose presence, type or default differ between two releases' key sets."""
    diff = {role: sorted(k for k in set(a[role]) | set(b[role]) if a[role].get(k) != b[role].get(k)) for role in a}
    return {role: keys for role, keys in diff.items() if keys}


def _families_with_lines(families: dict[str, Any], family: str, lines: list[str]) -> dict[str, Any]:
    """``families.json`` with ``family``'s key sets, one per line (the first from version 0)."""
    for fam in families["families"]:
        if fam["family"] == family:
            fam["key_sets"] = [{"from_version": "0" if i == 0 else line, "file": file_name(family, line)}
                               for i, line in enumerate(lines)]
    return families


def write(family: str, documents: Mapping[str, Mapping[str, Any]], check: bool, origin: str) -> int:
    """Write (or with ``check`` compare) ``documents`` (line -> document); 1 when a check finds a difference."""
    families_path = DATA / "families.json"
    families = render(_families_with_lines(json.loads(families_path.read_text()), family, list(documents)))
    wanted = {**{file_name(family, line): render(doc) for line, doc in documents.items()}, "families.json": families}
    stale = [p.name for p in DATA.glob(f"{family}-*.json") if p.name not in wanted]
    changed = [name for name, text in wanted.items()
               if not (DATA / name).exists() or (DATA / name).read_text() != text] + stale
    if check:
        if changed:
            print(f"configwatch: differ from {origin}: {', '.join(sorted(changed))}", file=sys.stderr)
            return 1
        return 0
    for name in stale:
        (DATA / name).unlink()
    for name, text in wanted.items():
        (DATA / name).write_text(text)
    log.info("wrote %d %s key sets and families.json", len(documents), family)
    return 0
