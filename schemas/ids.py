"""The one way an id is derived from its parts (ids are a contract: never change the bytes).

``derive_id(*parts, sep, length)`` is the first ``length`` hex digits of the sha256 of the parts
joined by ``sep`` (UTF-8). Every deterministic id and digest in judgeflow goes through it:

* job and outcome ids (detect): ``derive_id("job", inputs_id, kind)``, ``sep="\\x1f"`` (default);
* judge ``result_id`` and debrief ``evaluation_id``: ``derive_id(a, b, sep="|")``;
* ``calibration_id`` and other content digests: ``derive_id(canonical_json(obj), length=None)``.

tests/unit/schemas/test_ids.py checks them against ids recorded before this module existed
(tests/data/recorded_ids.json).
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

#: The default separator: ASCII unit separator, which no id part contains.
UNIT_SEP = "\x1f"


def derive_id(*parts: str, sep: str = UNIT_SEP, length: int | None = 32) -> str:
    """sha256 hex of ``sep.join(parts)``, cut to ``length`` digits (None: all 64)."""
    return hashlib.sha256(sep.join(parts).encode()).hexdigest()[:length]


def canonical_json(value: Any) -> str:
    """Sorted-key compact JSON (orjson's bytes, decoded): the part a content digest hashes."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
