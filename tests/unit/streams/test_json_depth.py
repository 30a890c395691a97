"""Valid JSON nested too deep is ``schema_error`` naming the depth, in every worker's decoder;
JSON that is broken (deep or not) stays ``invalid_json``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pytest

from agents.debrief.handler import parse_request
from agents.judge.run import decode_job
from schemas.calibration import Adjudication
from schemas.chart_review import AgentAnswer
from streams.decode import decode_record
from streams.errors import BadRecord
from streams.json_depth import nesting, too_deep

ANSWER = {"event_id": "e", "run_id": "r", "task_id": "t", "patient_id": "p", "field_id": "f",
          "agent_id": "a", "emitted_at": "2026-01-01T00:00:00Z"}


def deep(depth: int, *, closed: bool = True) -> bytes:
    """An answer whose ``answer`` value is ``depth`` nested arrays (the record one more)."""
    inner = b"[" * depth + (b"]" * depth if closed else b"")
    return orjson.dumps(ANSWER)[:-1] + b',"answer":' + inner + (b"}" if closed else b"")


@pytest.mark.parametrize(("raw", "want"), [
    (b'{"a": [1, {"b": "[[[["}]}', (3, True)),  # brackets inside strings do not count
    (b'{"a": "\\"[["}', (1, True)),  # nor after an escaped quote
    (b"[[[]]", (3, False)),
    (b"[{]}", (2, False)),
    (b"", (0, True)),
])
def test_nesting(raw: bytes, want: tuple[int, bool]) -> None:
    assert nesting(raw) == want


@pytest.mark.parametrize(("raw", "depth"), [
    (deep(10), None),  # within the bound
    (deep(300), 301),  # beyond pydantic's parser, valid for orjson
    (deep(1100), 1101),  # beyond orjson's own limit too
    (deep(1100, closed=False), None),  # not JSON: brackets never closed
    (deep(300)[:-1] + b",}", None),  # not JSON: a syntax error
    (b"{not json", None),
    (None, None),
])
def test_too_deep(raw: bytes | None, depth: int | None) -> None:
    assert too_deep(raw) == depth


DECODERS: dict[str, Callable[[bytes | None], Any]] = {
    "detect": lambda v: decode_record(AgentAnswer, v), "judge": decode_job,
    "debrief": parse_request,
    "calibrate": lambda v: decode_record(Adjudication, v)}


@pytest.mark.parametrize("worker", sorted(DECODERS))
@pytest.mark.parametrize(("raw", "error_type", "says_depth"), [
    (deep(300), "schema_error", True),
    (deep(900), "schema_error", True),
    (deep(1100), "schema_error", True),
    (deep(1100, closed=False), "invalid_json", False),
    (b'{"a": [1,}', "invalid_json", False),
])
def test_deep_valid_json_is_a_schema_error(worker: str, raw: bytes, error_type: str,
                                           says_depth: bool) -> None:
    with pytest.raises(BadRecord) as err:
        DECODERS[worker](raw)
    assert err.value.error_type == error_type, err.value.message
    if says_depth and worker != "debrief":  # debrief reports its missing fields first
        assert "nested" in err.value.message and "32" in err.value.message
