"""The one decoder of consumed records (streams/decode.py) and the checks before paying, as a
table: the fault probe's records of issue 25 (tests/unit/streams/probe_cases.py) -> the
dead-letter type, plus the decoder's own edges."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.debrief.handler import parse_request
from agents.debrief.sampledata import REQUESTS_FILE
from agents.judge.run import accept_job, admit, decode_job
from schemas.calibration import Adjudication
from schemas.chart_review import AgentAnswer, CellOutcome, JudgeJob
from schemas.medkit import DebriefRequest
from schemas.skill import load_skill
from streams import decode, limits
from streams.decode import decode_record, has_duplicate_key, max_bytes, repeats_a_key
from streams.detect.processor import DetectProcessor
from streams.detect.state import DetectConfig
from streams.errors import BadRecord
from streams.sampledata import DATA_DIR
from streams.settings import Settings
from tests.unit.agents.judge.fixtures import TASK, write_skill
from tests.unit.streams import probe_cases as probe

CASES = frozenset(orjson.loads(line)["case_id"]
                  for line in REQUESTS_FILE.read_bytes().splitlines())


def verdict(check: Callable[[bytes], Any], raw: bytes) -> str | None:
    try:
        check(raw)
    except BadRecord as exc:
        return exc.error_type
    return None


@pytest.fixture(scope="module")
def check_job(tmp_path_factory: pytest.TempPathFactory) -> Callable[[bytes], Any]:
    skill = load_skill(write_skill(tmp_path_factory.mktemp("skill")))
    return lambda raw: accept_job(raw, skill, {TASK})


@pytest.mark.parametrize(("name", "raw", "expected"), probe.jobs(),
                         ids=[c[0] for c in probe.jobs()])
def test_probe_jobs(check_job: Callable[[bytes], Any], name: str, raw: bytes,
                    expected: str | None) -> None:
    assert verdict(check_job, raw) == expected, name


@pytest.mark.parametrize(("name", "raw", "expected"), probe.requests(),
                         ids=[c[0] for c in probe.requests()])
def test_probe_debrief_requests(name: str, raw: bytes, expected: str | None) -> None:
    assert verdict(lambda r: parse_request(r, CASES), raw) == expected, name


@pytest.mark.parametrize(("name", "raw", "expected"), probe.adjudications(),
                         ids=[c[0] for c in probe.adjudications()])
def test_probe_adjudications(name: str, raw: bytes, expected: str | None) -> None:
    assert verdict(lambda r: decode_record(Adjudication, r), raw) == expected, name


@pytest.fixture(scope="module")
def detector() -> DetectProcessor:
    s = Settings()
    return DetectProcessor(load_skill(s.skill_dir), DetectConfig(
        s.expected_agents, 30.0, 100.0, s.low_confidence_threshold, {}))


@pytest.mark.parametrize(("name", "raw", "expected"), probe.answers(),
                         ids=[c[0] for c in probe.answers()])
def test_probe_answers(detector: DetectProcessor, name: str, raw: bytes,
                       expected: str | None) -> None:
    """Detect decodes its input itself (its own messages, the golden files pin them) but
    must give the verdicts of the one decoder and the limits: the same type from both."""
    assert verdict(detector.validate, raw) == expected, name

    def decoded(r: bytes) -> None:  # what produce checks an answer with
        if problems := limits.record_problems(decode_record(AgentAnswer, r)):
            raise BadRecord("oversized", "; ".join(problems))

    assert verdict(decoded, raw) == expected, name


def test_no_catalogue_and_no_tasks_accept_any_case_and_task(
        check_job: Callable[[bytes], Any], tmp_path: Path) -> None:
    raw = probe.dumps(probe.request(2, case_id=probe.UNKNOWN_CASE))
    assert parse_request(raw).case_id == probe.UNKNOWN_CASE
    skill = load_skill(write_skill(tmp_path))
    admit(decode_job(probe.dumps(probe.other_task_job())), skill, frozenset())


EDGES: list[tuple[type[Any], bytes | None, str | None]] = [
    (JudgeJob, None, "invalid_json"),
    (JudgeJob, b"", "invalid_json"),
    (JudgeJob, b"{not json", "invalid_json"),
    (JudgeJob, b'"a string"', "invalid_json"),
    (JudgeJob, b'{"job_id": "x"}', "schema_error"),
    (JudgeJob, b'{"a": Infinity}', "schema_error"),
    (CellOutcome, b'{"outcome": "x", "outcome": "y"}', "schema_error"),
    (CellOutcome, b'{"a": {"b": 1, "b": 1}}', "schema_error"),  # nested, same value too
    (CellOutcome, b"[" * 40 + b"]" * 40, "invalid_json"),  # an array, however deep
    (CellOutcome, b'{"a":' + b"[" * 40 + b"]" * 40 + b"}", "schema_error"),
    (DebriefRequest, b" " * (limits.MAX_DEBRIEF_REQUEST_BYTES + 1), "oversized"),
    (Adjudication, b" " * (limits.MAX_ADJUDICATION_BYTES + 1), "oversized"),
]


@pytest.mark.parametrize(("model", "raw", "expected"), EDGES)
def test_decoder_edges(model: type[Any], raw: bytes | None, expected: str | None) -> None:
    assert verdict(lambda r: decode_record(model, r), raw or b"") == expected


def test_the_messages_quote_no_value_and_no_key() -> None:
    secret = "zqphimark"
    raws = [probe.duplicate_key({**probe.ADJUDICATION, secret: 1}, secret, 2),
            probe.dumps({**probe.ADJUDICATION, "adjudicated_at": f"2024-05-08 {secret}"}),
            probe.dumps({**probe.ADJUDICATION, "final_answer": secret * 20_000})]
    for raw in raws:
        with pytest.raises(BadRecord) as exc:
            decode_record(Adjudication, raw)
        assert secret not in exc.value.message


def test_duplicate_keys_are_found_after_unescaping() -> None:
    assert has_duplicate_key(b'{"a": 1, "\\u0061": 2}')
    assert not has_duplicate_key(b'{"a": 1, "b": {"a": 2}}')
    assert not has_duplicate_key(b'[{"a": 1}, {"a": 1}]')


@pytest.mark.parametrize("raw", [
    b'{"a": 1, "a": 2}', b'{"a" : 1, "b": {"a": 2, "a" :3}}', b'{"a":1,"\\u0061":2}',
    b'{"q": "say \\"x\\": y", "a": 1, "a": 2}', b'{"a":\t1,"a"\n:\r2}',
    b'[{"a": 1, "a": 1}]'])
def test_the_cheap_check_never_hides_a_duplicate(raw: bytes) -> None:
    """:func:`repeats_a_key` skips the slow check only when the key ends it counts equal the
    parsed keys: spacing, escaped quotes and nesting do not make it miss one."""
    assert repeats_a_key(raw, orjson.loads(raw))


def test_the_bounds_are_the_named_constants() -> None:
    assert max_bytes(Adjudication) == limits.MAX_ADJUDICATION_BYTES
    assert max_bytes(DebriefRequest) == limits.MAX_DEBRIEF_REQUEST_BYTES
    assert max_bytes(JudgeJob) == limits.MAX_INPUT_RECORD_BYTES
    assert max_bytes(AgentAnswer) == limits.MAX_ANSWER_BYTES
    assert "MAX_ADJUDICATION_BYTES" in Path("docs/contracts.md").read_text()


def test_the_sample_answers_never_take_the_slow_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """Detect's hot path: a record as agents write it is cleared by the one scan."""
    def slow(raw: bytes) -> bool:
        raise AssertionError("second parse")

    monkeypatch.setattr(decode, "has_duplicate_key", slow)
    for line in (DATA_DIR / "answers.jsonl").read_bytes().splitlines():
        assert not repeats_a_key(line, orjson.loads(line))
