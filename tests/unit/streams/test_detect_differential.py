"""Differential: the live detect processor against the frozen reference (before the hot path).

Both are driven over the same record streams: the sample, the malformed records, the bench's
synthetic set and seeded random mutations, with redeliveries, duplicates, superseding re-runs
and settle/purge ticks. Every step must give byte-identical outputs, the same notes, the same
DLQ type and message, and the same cell state.
"""

from __future__ import annotations

import json
import random
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest

from schemas.skill import Skill, load_skill
from streams.detect import fastpath
from streams.detect.processor import DetectProcessor
from streams.detect.state import CellState, DetectConfig
from streams.errors import BadRecord
from streams.settings import Settings
from tests.integration.sample import load_sample, reference_jobs
from tests.unit.streams import detect_reference as ref
from tools.bench.detect import synthetic_answers

BASELINE_IDS = Path(__file__).parent.parent.parent / "data" / "baseline_job_ids.json"
Record = tuple[str, bytes | None, bytes | None]  # topic, key, value


@pytest.fixture(scope="module")
def skill() -> Skill:
    return load_skill(Settings().skill_dir)


def _cfg(settle: float = 30.0) -> DetectConfig:
    s = Settings()
    return DetectConfig(s.expected_agents, settle, 100.0, s.low_confidence_threshold)


def _run_one(proc: Any, states: dict[bytes, Any], rec: Record, offset: int,
             now: float) -> tuple[Any, ...]:
    topic, key, value = rec
    source = (topic, 0, offset)
    try:
        if topic == "ticks":
            assert key is not None
            step = proc.on_tick(states.get(key), source, now)
        else:
            answer = proc.validate(value)
            key = answer.key.encode()
            step = proc.on_answer(answer, source, states.get(key), now)
    except BadRecord as exc:
        return ("dlq", exc.error_type, exc.message)
    except Exception as exc:
        return ("dlq", "internal_error", f"{type(exc).__name__}: {exc}")
    if step.changed:
        states[key] = step.state
    state = states.get(key)
    # The stored form is compared decoded: the live one is compressed (both load alike).
    return ("ok", step.note, step.changed, [(e.kind, e.key, e.value) for e in step.emits],
            None if state is None else CellState.loads(state.dumps()))


def _compare(skill: Skill, records: list[tuple[Record, float]], cfg: DetectConfig) -> int:
    """Run both processors; return how many steps were compared."""
    live, frozen = DetectProcessor(skill, cfg), ref.DetectProcessor(skill, cfg)
    live_states: dict[bytes, CellState | None] = {}
    ref_states: dict[bytes, Any] = {}
    for offset, (rec, now) in enumerate(records):
        got = _run_one(live, live_states, rec, offset, now)
        want = _run_one(frozen, ref_states, rec, offset, now)
        assert got == want, f"step {offset} differs: {rec[2]!r}"
    return len(records)


def _with_ticks(values: list[bytes], rng: random.Random, t0: float = 1000.0
                ) -> list[tuple[Record, float]]:
    """Answers in order, with redeliveries (same offset is not possible here, so ticks and
    repeats), and a settle tick then a purge tick for every key at the end."""
    out: list[tuple[Record, float]] = []
    keys: list[bytes] = []
    now = t0
    for value in values:
        now += rng.random()
        out.append((("answers", None, value), now))
        try:
            rec = orjson.loads(value)
            keys.append(f"{rec['task_id']}|{rec['patient_id']}|{rec['field_id']}".encode())
        except Exception:
            pass
        if rng.random() < 0.05:  # a duplicate event id at another offset
            out.append((("answers", None, value), now))
        if keys and rng.random() < 0.05:  # an early tick
            out.append((("ticks", rng.choice(keys), b""), now))
    for key in dict.fromkeys(keys):
        out.append((("ticks", key, b""), now + 31))
    for key in dict.fromkeys(keys):
        out.append((("ticks", key, b""), now + 200))
    return out


def test_fast_path_is_enabled_for_this_model() -> None:
    """Fails when AgentAnswer changed: re-check fastpath.py against the model, then update
    SCHEMA_SHA (until then every record safely takes the model path)."""
    assert fastpath.schema_sha() == fastpath.SCHEMA_SHA
    assert fastpath.ENABLED


def test_sample_and_malformed(skill: Skill) -> None:
    sample = load_sample()
    values = [v for _, v in sample.answers] + sample.malformed
    assert _compare(skill, _with_ticks(values, random.Random(1)), _cfg()) > len(values)


def test_sample_job_ids_unchanged(skill: Skill) -> None:
    s = Settings()
    jobs = reference_jobs(load_sample(), skill, s.expected_agents, s.low_confidence_threshold)
    baseline = json.loads(BASELINE_IDS.read_text())
    assert {k: sorted(v) for k, v in jobs.items()} == baseline
    assert sum(len(v) for v in baseline.values()) == 97


def test_synthetic_set(skill: Skill) -> None:
    values = [v for _, v in synthetic_answers(Settings(), 4000)]
    _compare(skill, _with_ticks(values, random.Random(2)), _cfg())


def with_reruns(rng: random.Random) -> list[bytes]:
    """The sample's answers, about a third of them followed by a later run of the same agent
    with another answer."""
    values = []
    for rec in (orjson.loads(v) for _, v in load_sample().answers):
        values.append(orjson.dumps(rec))
        if rng.random() < 0.3:
            values.append(orjson.dumps({**rec, "event_id": rec["event_id"] + "-r2",
                                        "run_id": "zz-rerun", "answer": rng.choice(
                                            [True, "no", "unknown", 3, None, ["a"]])}))
    return values


def test_superseding_reruns_and_partial_cells(skill: Skill) -> None:
    """Later runs of one agent after a decision, and cells settled without an agent."""
    rng = random.Random(3)
    values = with_reruns(rng)
    rng.shuffle(values)
    _compare(skill, _with_ticks(values[: len(values) // 2], rng), _cfg(settle=0.5))


_STAMPS = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00.5Z",
           "2026-01-01T00:00:00.1234567Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00",
           "2026-01-01T00:00:00-05:30", "2026-13-01T00:00:00Z", "2026-01-01T25:00:00Z",
           "2026-01-01", 1767225600, "2026-01-01T00:00:00+24:00", "", "2026-01-01T00:00Z",
           "2026-01-01T00:00:00.000000+00:00", "2026-01-01T00:00:00-00:00"]
_ODD = [None, True, False, 0, 1, -1, 0.0, 0.5, 1.0, 1.5, -0.0, "", "x", "low", "LOW", "0.2",
        "medium", "high", [], [1], {}, {"a": 1}, "é", "a" * 201, "a/b", "..", "a..b", ".a",
        "ok-id_1.2", [{"note_id": "n1", "quote": "q"}], [{"note_id": "n1", "quote": "q",
                                                          "offsets": [3, 1]}], 2**40, "a" * 200,
        [{"note_id": "n1", "quote": "q", "offsets": [1, 3]}],
        [{"note_id": "n1", "quote": "q", "offsets": [0, 0]}, {"note_id": "n2", "quote": ""}],
        [{"note_id": "n1", "quote": "q", "offsets": [True, 3]}],
        [{"note_id": "n1", "quote": "q", "offsets": [1.0, 3]}],
        [{"note_id": "n1", "quote": "q", "offsets": [1, 2, 3]}],
        [{"note_id": "n1", "quote": "q", "offsets": None}],
        [{"note_id": "n1", "quote": "q", "offsets": [-1, 3]}],
        [{"note_id": "../x", "quote": "q"}], [{"note_id": "n1", "quote": 3}],
        [{"note_id": "n1", "quote": "q", "page": 2}], [{"quote": "q"}], ["n1"], [None]]


def _mutate(rec: dict[str, Any], rng: random.Random) -> bytes:
    rec = dict(rec)
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        name = rng.choice([*rec.keys(), "evidence", "rationale", "schema_version",
                           "low_confidence_reason", "confidence", "extra"])
        if op < 0.15:
            rec.pop(name, None)
        elif op < 0.35:
            rec["emitted_at"] = rng.choice(_STAMPS)
        elif op < 0.5:
            rec["confidence"] = rng.choice([*_ODD, 0.2, 0.49, 0.5, 0.51])
        else:
            rec[name] = rng.choice(_ODD)
    if rng.random() < 0.03:
        return rng.choice([b"", b"[]", b"null", b"{", b'"x"', b"\xff"])
    return orjson.dumps(rec)


def mutated(rng: random.Random, n: int) -> list[bytes]:
    """``n`` seeded mutations of the sample's answers (see :func:`_mutate`)."""
    base = [orjson.loads(v) for _, v in load_sample().answers]
    return [_mutate(rng.choice(base), rng) for _ in range(n)]


def test_random_mutations(skill: Skill) -> None:
    rng = random.Random(10)
    values = mutated(rng, 3000)
    values += [v for _, v in load_sample().answers]
    rng.shuffle(values)
    _compare(skill, _with_ticks(values, rng), _cfg())
    # The mutations reach all three paths: fast accept, model accept, reject.
    paths = {"fast": 0, "model": 0, "reject": 0}
    proc = DetectProcessor(skill, _cfg())
    for value in values:
        try:
            proc.validate(value)
        except BadRecord:
            paths["reject"] += 1
            continue
        data = orjson.loads(value)
        paths["fast" if fastpath.fast_answer(data) is not None else "model"] += 1
    assert min(paths.values()) >= 100, paths


def test_batches_equal_one_by_one(skill: Skill) -> None:
    """Batches of any size: same outputs in order and same final cells as storing after every
    event; each changed cell appears once per batch."""
    from streams.detect.batch import Batch

    rng = random.Random(4)
    values = [v for _, v in synthetic_answers(Settings(), 2000)]
    records = _with_ticks(values, rng)
    one = DetectProcessor(skill, _cfg())
    states: dict[bytes, Any] = {}
    want = [r for off, (rec, now) in enumerate(records) if (r := _run_one(one, states, rec, off,
                                                                         now))[0] == "ok"]
    stored: dict[bytes, bytes] = {}
    got: list[bytes] = []
    i = 0
    while i < len(records):
        size = rng.choice([1, 2, 7, 50, 500])
        batch = Batch(one, lambda k: CellState.loads(stored[k]) if k in stored else None)
        for off in range(i, min(i + size, len(records))):
            (topic, key, value), now = records[off]
            try:
                if topic == "ticks":
                    assert key is not None
                    batch.tick(key, (topic, 0, off), now)
                else:
                    batch.answer(one.validate(value), (topic, 0, off), now)
            except BadRecord:
                continue
        for key, ch in batch.changed.items():
            if ch.state is None:
                stored.pop(key, None)
            else:
                stored[key] = ch.state.dumps()
        got += [e.value for e, _ in batch.emits]
        i += size
    assert got == [v for r in want for _, _, v in r[3]]
    final = {k: s.dumps() for k, s in states.items() if s is not None}
    assert all(v[:1] == b"{" for v in final.values())  # the changelog holds plain JSON
    assert stored == final


def test_cells_stored_by_older_workers_still_load(skill: Skill) -> None:
    """A changelog written by an older worker (plain JSON, or zlib over it) is read by this
    one."""
    values = [v for _, v in load_sample().answers]
    frozen = ref.DetectProcessor(skill, _cfg())
    states: dict[bytes, Any] = {}
    for off, value in enumerate(values):
        _run_one(frozen, states, ("answers", None, value), off, 1000.0)
    plain = [s.dumps() for s in states.values() if s is not None]
    assert plain and all(p[:1] == b"{" for p in plain)
    for p in plain:
        loaded = CellState.loads(p)
        assert orjson.loads(p)["answers"] == loaded.answers
        assert CellState.loads(loaded.dumps()) == loaded
        assert CellState.loads(zlib.compress(p, 1)) == loaded
