"""The fault probe's hostile records of issue 25, as (name, topic, raw value, dead-letter type):
shared by the unit table over the decoder (tests/unit/streams/test_decode.py) and the table
run on Apache Kafka by the workers (tests/integration/test_probe_records.py). A type of
``None`` is a record that must be accepted (the good record after the bad ones)."""

from __future__ import annotations

from typing import Any

import orjson

from agents.debrief.sampledata import REQUESTS_FILE
from streams import limits
from streams.sampledata import DATA_DIR
from tests.unit.agents.judge.fixtures import PATIENT, TASK, answer, disagreement, job

#: The adjudication of the issue's reproduction, minus its fault (a time without an offset).
ADJUDICATION: dict[str, Any] = {
    "cell": f"{TASK}|{PATIENT}|t2dm_dx", "task_id": TASK, "patient_id": PATIENT,
    "field_id": "t2dm_dx", "final_answer": True, "classification": "n_a",
    "adjudicator": "r", "adjudicated_at": "2024-05-08T10:24:00Z"}
FORGED = "job-1\n2026-01-01 00:00:00,000 INFO agents.judge.run: \x1b[2Kjob forged"
#: A case id no catalogue lists (the probe's "unknown case").
UNKNOWN_CASE = "no-such-case"


def dumps(data: Any) -> bytes:
    return orjson.dumps(data)


def good_job(job_id: str = "job-probe-good") -> dict[str, Any]:
    return disagreement(job_id=job_id).model_dump(mode="json")


def other_task_job() -> dict[str, Any]:
    data = good_job("job-probe-task")
    data["task_id"] = "no-such-task"
    for a in data["answers"]:
        a["task_id"] = "no-such-task"
    return data


def long_quote_job() -> dict[str, Any]:
    data = good_job("job-probe-quote")
    data["answers"][0]["evidence"][0]["quote"] = "q" * (limits.MAX_QUOTE_CHARS + 1)
    return data


def unknown_criterion_job() -> dict[str, Any]:
    return job("disagreement", answer("default", True, field_id="hba1c_trend"),
               answer("skeptical", False, field_id="hba1c_trend"),
               job_id="job-probe-criterion").model_dump(mode="json")


def request(n: int = 0, **over: Any) -> dict[str, Any]:
    data = orjson.loads(REQUESTS_FILE.read_bytes().splitlines()[n])
    return {**data, **over}


def duplicate_key(data: dict[str, Any], key: str, first: Any) -> bytes:
    """``data`` with ``key`` written twice: ``first``, then its own value (parsers keep the
    last one)."""
    body = dumps({k: v for k, v in data.items() if k != key})
    return (b'{"' + key.encode() + b'":' + dumps(first) + b',"' + key.encode() + b'":'
            + dumps(data[key]) + b"," + body[1:])


def jobs() -> list[tuple[str, bytes, str | None]]:
    naive = {**good_job("job-probe-naive"), "detected_at": "2024-05-08T10:24:00"}
    return [
        ("job id with newline and ESC", dumps({**good_job(), "job_id": FORGED}), "schema_error"),
        ("job id with ../", dumps({**good_job(), "job_id": "../../../tmp/owned"}),
         "schema_error"),
        ("job time without offset", dumps(naive), "schema_error"),
        ("job with a duplicate job_id", duplicate_key(good_job("job-probe-dup"), "job_id",
                                                      "job-probe-first"), "schema_error"),
        ("job of an unknown task", dumps(other_task_job()), "unknown_task"),
        ("job of an unknown criterion", dumps(unknown_criterion_job()), "unknown_criterion"),
        ("job with NaN", dumps(good_job("job-probe-nan")).replace(b"[true,false]",
                                                                  b"[NaN,false]"),
         "schema_error"),
        ("job that is a JSON array", b"[1]", "invalid_json"),
        ("job with an over-long quote", dumps(long_quote_job()), "oversized"),
        ("good job", dumps(good_job()), None),
    ]


def requests() -> list[tuple[str, bytes, str | None]]:
    return [
        ("request with a duplicate case_id", duplicate_key(request(1), "case_id",
                                                           "ankle-inversion"), "schema_error"),
        ("request of an unknown case", dumps(request(2, case_id=UNKNOWN_CASE)),
         "unknown_case"),
        ("request id with newline", dumps(request(3, request_id="q\n1")), "schema_error"),
        ("request time without offset", dumps(request(4, requested_at="2024-05-08T10:24:00")),
         "schema_error"),
        ("good request", dumps(request(0)), None),
    ]


def adjudications(a: dict[str, Any] = ADJUDICATION) -> list[tuple[str, bytes, str | None]]:
    """The faults on adjudication ``a`` (an aware one), then a later good one of its cell."""
    later = {**a, "adjudicated_at": "2099-05-08T10:25:00Z", "final_answer": False}
    return [
        ("adjudication without offset (the issue's record)",
         dumps({**a, "adjudicated_at": "2024-05-08T10:24:00"}), "schema_error"),
        ("adjudication with a duplicate final_answer", duplicate_key(a, "final_answer", False),
         "schema_error"),
        ("adjudication with a duplicate key escaped", dumps(a)[:-1] + b',"final\\u005fanswer":'
         b"false}", "schema_error"),
        ("adjudication with a 1 MB final_answer",
         dumps({**a, "final_answer": "x" * 1_000_000}), "oversized"),
        ("adjudication with a 100 KB final_answer",  # over its own bound, under the default
         dumps({**a, "final_answer": "x" * 100_000}), "oversized"),
        ("adjudication id with newline", dumps({**a, "adjudication_id": "a\nb"}),
         "schema_error"),
        ("good adjudication", dumps(later), None),
    ]


def agent_answer(n: int = 0, **over: Any) -> dict[str, Any]:
    """The sample's ``n``-th agent answer (``over`` replacing fields)."""
    data = orjson.loads((DATA_DIR / "answers.jsonl").read_bytes().splitlines()[n])
    return {**data, **over}


def answers() -> list[tuple[str, bytes, str | None]]:
    """Agent answers for detect, each keyed by its own cell (the key check is not probed)."""
    a = agent_answer(0)
    return [
        ("answer with a duplicate patient_id", duplicate_key(a, "patient_id", "P007"),
         "schema_error"),
        ("answer with a duplicate key escaped",
         dumps(agent_answer(1))[:-1] + b',"patient\\u005fid":"P007"}', "schema_error"),
        ("answer with NaN confidence", dumps(agent_answer(2, confidence=0.5)).replace(
            b'"confidence":0.5', b'"confidence":NaN'), "schema_error"),
        ("answer event id with newline and ESC",
         dumps(agent_answer(3, event_id="evt-1\n\x1b[2Kforged")), "schema_error"),
        ("answer run id with ../", dumps(agent_answer(4, run_id="../../../tmp/owned")),
         "schema_error"),
        ("answer time without offset", dumps(agent_answer(5, emitted_at="2024-05-06T09:00:01")),
         "schema_error"),
        ("answer with an over-long quote", dumps(agent_answer(7, evidence=[
            {"note_id": "P001-N04", "quote": "q" * (limits.MAX_QUOTE_CHARS + 1)}])),
         "oversized"),
        ("answer over its own bound, under the default",
         dumps(agent_answer(6, rationale="x" * (limits.MAX_ANSWER_BYTES + 1))), "oversized"),
        ("good answer", dumps(a), None),
    ]
