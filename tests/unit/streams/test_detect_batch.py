"""Batches as the Faust edge runs them (records with their Kafka keys, through the cell store
with hot, cold and compressed cells) give what storing after every single event gives: the
same outputs in order, dead letters, changelog records, due times and cells, in batches of
any size, over streams with duplicates, bad records and keys, re-runs and settle/purge
ticks."""

from __future__ import annotations

import random
import zlib
from typing import Any

import orjson
import pytest

from schemas.skill import Skill, load_skill
from streams.detect.batch import Batch
from streams.detect.faust_edge import bounded
from streams.detect.processor import DetectProcessor
from streams.detect.state import CellState, DetectConfig
from streams.detect.store import CellStore, ColdRef
from streams.errors import BadRecord
from streams.settings import Settings
from tests.integration.sample import load_sample
from tests.unit.streams.detect_golden import mutated, run_one, with_reruns, with_ticks
from tools.bench.detect import synthetic_answers
from tools.bench.detect_core import core_stream


@pytest.fixture(scope="module")
def skill() -> Skill:
    return load_skill(Settings().skill_dir)


def _cfg(agents: tuple[str, ...] = ("default", "skeptical")) -> DetectConfig:
    return DetectConfig(agents, 30.0, 100.0, Settings().low_confidence_threshold)


def _records(values: list[bytes], rng: random.Random) -> list[tuple[Any, ...]]:
    """(key, value, topic, now): answers keyed by their cell (a few with a wrong or no key),
    duplicates and ticks."""
    out = []
    for (topic, key, value), now in with_ticks(values, rng):
        if topic == "answers":
            try:
                d = orjson.loads(value or b"")
                key = f"{d['task_id']}|{d['patient_id']}|{d['field_id']}".encode()
            except Exception:
                key = b"not|a|key"
            roll = rng.random()
            key = None if roll < 0.01 else b"other|cell|key" if roll < 0.02 else key
        out.append((key, value, topic, now))
    return out


def _run(proc: DetectProcessor, records: list[Any], sizes: list[int], cfg: DetectConfig
         ) -> tuple[list[Any], list[Any], dict[bytes, CellState], bool, list[Any]]:
    store = CellStore({}, cfg, hot_max=40, block_cells=16)
    outputs: list[Any] = []
    dead: list[Any] = []
    changelog: list[Any] = []
    cold = False
    i = 0
    for size in sizes:
        if i >= len(records):
            break
        batch = Batch(proc, store.load, bounded)
        for off in range(i, min(i + size, len(records))):
            key, value, topic, now = records[off]
            source = (topic, zlib.crc32(key or b"") % 3, off)  # a cell lives in one partition
            try:
                if topic == "ticks":
                    batch.tick(key, source, now)
                else:
                    batch.record(key, value, source, now)
            except BadRecord as exc:
                dead.append((off, exc.error_type, exc.message))
        outputs += [(e.kind, e.key, e.value, e.label, str(note)) for e, note in batch.emits]
        changelog += store.write(batch.changed)
        cold = cold or any(isinstance(v, ColdRef) for v in store.data.values())
        changelog.append(dict(store.index._due))  # when each cell is next due, and where
        i += size
    store.rebuild_index()
    return outputs, changelog, dict(store.items()), cold, dead


@pytest.mark.parametrize("agents", [("default", "skeptical"), ("default", "skeptical", "third"),
                                    ("default",)])
def test_batches_of_any_size_equal_one_event_at_a_time(skill: Skill,
                                                       agents: tuple[str, ...]) -> None:
    cfg = _cfg(agents)
    rng = random.Random(10)
    sample = load_sample()
    streams = [[v for _, v in sample.answers] + sample.malformed, core_stream(1500, block=400),
               mutated(rng, 800) + [v for _, v in sample.answers], with_reruns(rng)]
    for n, values in enumerate(streams):
        rng = random.Random(n)
        records = _records(values, rng)
        sizes = [rng.choice([1, 3, 50, 700, 2000]) for _ in range(len(records))]
        proc = DetectProcessor(skill, cfg)
        want = _run(proc, records, [1] * len(records), cfg)
        got = _run(proc, records, sizes, cfg)
        assert got[0] == want[0], f"stream {n}: outputs differ"
        assert got[4] == want[4], f"stream {n}: dead letters differ"
        assert got[2] == want[2], f"stream {n}: cells differ"
        assert got[3] and want[3]  # cells went cold and were read back from compressed blocks
        # the changelog compacted (what recovery reads), and the due times at the end
        assert _compacted(got[1]) == _compacted(want[1]), f"stream {n}: changelog differs"
        assert got[1][-1] == want[1][-1], f"stream {n}: due times differ"


def _compacted(changelog: list[Any]) -> dict[bytes, tuple[int, bytes]]:
    cells: dict[bytes, tuple[int, bytes]] = {}
    for rec in changelog:
        if isinstance(rec, tuple):
            partition, key, value = rec
            if value is None:
                cells.pop(key, None)
            else:
                cells[key] = (partition, value)
    return cells


def test_batches_equal_one_by_one_without_the_store(skill: Skill) -> None:
    """The processor's own steps (stored after each event) against batches: same outputs in
    order, same final cells; the changelog holds plain JSON."""
    rng = random.Random(4)
    values = [v for _, v in synthetic_answers(Settings(), 2000)]
    records = with_ticks(values, rng)
    one = DetectProcessor(skill, _cfg())
    states: dict[bytes, Any] = {}
    want = [r for off, (rec, now) in enumerate(records)
            if (r := run_one(one, states, rec, off, now))[0] == "ok"]
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
