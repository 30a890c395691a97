"""Table-driven tests of answer canonicalisation (no broker)."""

from __future__ import annotations

from typing import Any

import pytest

from schemas.skill import AnswerSchema
from streams.detect.normalize import Invalid, canonicalize, format_signature

BOOL = AnswerSchema(type="boolean", enum=(True, False, "no_info"))
YESNO = AnswerSchema(type="enum", enum=("yes", "no", "no_info"))
DMTYPE = AnswerSchema(type="enum", enum=("type_1", "type_2", "gestational", "other", "no_info"))
A1C = AnswerSchema(type="number", unit="%")
EGFR = AnswerSchema(type="number", unit="mL/min/1.73m2")
DATE = AnswerSchema(type="date", format="YYYY-MM-DD")
MEDS = AnswerSchema(type="list", enum=("metformin", "insulin", "empagliflozin"))
STRICT = AnswerSchema(type="boolean", enum=(True, False), allows_no_info=False)


@pytest.mark.parametrize(("schema", "raw", "expected"), [
    (BOOL, True, True), (BOOL, "true", True), (BOOL, "yes", True), (BOOL, "Yes", True),
    (BOOL, "Y", True), (BOOL, 1, True), (BOOL, " TRUE ", True), (BOOL, "present", True),
    (BOOL, False, False), (BOOL, "no", False), (BOOL, "N", False), (BOOL, 0, False),
    (BOOL, "0", False), (BOOL, "negative", False),
    (BOOL, None, "no_info"), (BOOL, "no_info", "no_info"), (BOOL, "unknown", "no_info"),
    (BOOL, "", "no_info"), (BOOL, "Not documented", "no_info"),
    (YESNO, "yes", "yes"), (YESNO, " YES ", "yes"), (YESNO, True, "yes"), (YESNO, False, "no"),
    (YESNO, "Y", "yes"), (YESNO, None, "no_info"),
    (DMTYPE, "Type_2", "type_2"), (DMTYPE, " type_1", "type_1"), (DMTYPE, "NO_INFO", "no_info"),
    (A1C, 7, 7), (A1C, 7.0, 7), (A1C, "7", 7), (A1C, " 7.0 ", 7), (A1C, "7 %", 7),
    (A1C, "7%", 7), (A1C, 8.25, 8.25), (A1C, "8.25%", 8.25), (A1C, "no_info", "no_info"),
    (EGFR, "42 mL/min/1.73m2", 42), (EGFR, "42", 42), (EGFR, 42.0, 42),
    (DATE, "2019-03-04", "2019-03-04"), (DATE, "2019/03/04", "2019-03-04"),
    (DATE, "03/04/2019", "2019-03-04"), (DATE, "4 March 2019", "2019-03-04"),
    (DATE, "March 4, 2019", "2019-03-04"), (DATE, "Mar 4, 2019", "2019-03-04"),
    (MEDS, ["metformin", "insulin"], ("insulin", "metformin")),
    (MEDS, ["Insulin", " metformin "], ("insulin", "metformin")),
    (MEDS, "metformin; insulin", ("insulin", "metformin")),
    (MEDS, [], ()), (MEDS, None, "no_info"),
])
def test_canonical_values(schema: AnswerSchema, raw: Any, expected: Any) -> None:
    assert canonicalize(raw, schema) == expected


@pytest.mark.parametrize(("schema", "raw"), [
    (BOOL, "maybe"), (BOOL, 2), (BOOL, [True]), (YESNO, "perhaps"), (DMTYPE, "type_3"),
    (A1C, "7 mg"), (A1C, "seven"), (A1C, True), (A1C, float("nan")), (DATE, "yesterday"),
    (DATE, "2019-13-45"), (MEDS, ["metformin", "aspirin"]), (STRICT, None),
])
def test_uncanonicalisable_answers_are_invalid(schema: AnswerSchema, raw: Any) -> None:
    value = canonicalize(raw, schema)
    assert isinstance(value, Invalid)
    assert value.reason


def test_invalid_values_compare_by_raw_text() -> None:
    assert canonicalize("maybe", BOOL) == canonicalize("maybe", BOOL)
    assert canonicalize("maybe", BOOL) != canonicalize("perhaps", BOOL)


@pytest.mark.parametrize(("a", "b", "same"), [
    (True, True, True), (True, "yes", False), ("Yes", "yes", False), (42, 42.0, False),
    (42, "42 %", False), (None, "no_info", False), (["a", "b"], ["b", "a"], True),
    (["a", "b"], ["A", "b"], False), ("2019-03-04", "03/04/2019", False),
])
def test_format_signature(a: Any, b: Any, same: bool) -> None:
    assert (format_signature(a) == format_signature(b)) is same


@pytest.mark.parametrize(("raw", "expected"), [
    (2**63, 2**63), (2**64 - 2048, 2**64 - 2048), (2**64 - 1, float(2**64)),
    (-(2**63), -(2**63)), (1e19, 10**19),
    (2**64, float(2**64)), (-(2**63) - 1025, float(-(2**63) - 1025)), (1e300, 1e300),
    ("1e300", 1e300),
])
def test_whole_numbers_beyond_64_bits_stay_floats(raw: Any, expected: Any) -> None:
    """As an int, 2**64 has no JSON form here (orjson writes 64-bit integers): every decision
    of its cell failed (and its settle ticks again and again), so the cell never left."""
    canon = canonicalize(raw, A1C)
    assert canon == expected and type(canon) is type(expected)


def test_a_cell_with_a_huge_number_is_decided() -> None:
    """orjson reads integers beyond 64 bits as floats (the raw answers here)."""
    import orjson

    from schemas.chart_review import AgentAnswer
    from streams.detect.decide import decide

    stamp = "2026-01-01T00:00:00Z"
    answers = [AgentAnswer.model_validate({
        "event_id": f"e{i}", "run_id": "r", "task_id": "t", "patient_id": "p", "field_id": "f",
        "agent_id": agent, "answer": value, "confidence": "high", "emitted_at": stamp})
               for i, (agent, value) in enumerate(zip("ab", orjson.loads(
                   b"[18446744073709551616, -9223372036854775809]"), strict=True))]
    d = decide(answers, A1C, ("a", "b"), 0.5)
    assert d.outcome == "disagreement"
    # the first stays a float; the second is exactly -2**63, an int orjson writes
    assert orjson.dumps([n.json_value for n in d.answers]) == (
        b"[1.8446744073709552e+19,-9223372036854775808]")
