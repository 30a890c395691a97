"""The size limits every edge enforces (streams/limits.py)."""

from __future__ import annotations

import orjson
import pytest

from agents.debrief.handler import parse_request
from schemas.chart_review import Evidence
from streams import limits
from streams.errors import BadRecord
from tests.unit.agents.judge.fixtures import answer, disagreement, job


def test_free_text_over_its_limit_is_named_without_the_text() -> None:
    long = "secret " * (limits.MAX_RATIONALE_CHARS // 6)
    a = answer("default", True).model_copy(update={
        "rationale": long,
        "evidence": (Evidence(note_id="n01", quote="q" * (limits.MAX_QUOTE_CHARS + 1)),)})
    problems = limits.text_problems(a)
    assert [p.split(" ")[0] for p in problems] == ["rationale", "evidence[0].quote"]
    assert "secret" not in " ".join(problems)
    assert limits.text_problems(answer("default", True)) == []


def test_a_job_is_checked_answer_by_answer() -> None:
    ok = disagreement()
    assert limits.job_problems(ok) == []
    big = answer("skeptical", False).model_copy(update={"rationale": "x" * 700_000})
    bad = job("disagreement", answer("default", True), big)
    assert [p.split(".")[0] for p in limits.job_problems(bad)] == ["answers[1]"]


def test_a_debrief_request_over_its_limit_is_oversized() -> None:
    value = orjson.dumps({"request_id": "r", "pad": "x" * limits.MAX_DEBRIEF_REQUEST_BYTES})
    with pytest.raises(BadRecord) as err:
        parse_request(value)
    assert err.value.error_type == "oversized"


@pytest.mark.parametrize("size", [10, limits.MAX_DLQ_RECORD_BYTES + 1])
def test_dead_letter_value_keeps_the_original_when_it_fits(size: int) -> None:
    value, headers = limits.dead_letter_value(b"x" * size, b"k", [("error.type", b"t")])
    fits = size < limits.MAX_DLQ_RECORD_BYTES
    assert (value == b"x" * size) is fits
    assert ("original.size" in dict(headers)) is not fits
