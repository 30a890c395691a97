"""The cell store: decoded pending cells between batches, plain JSON on the changelog,
compressed groups for cold cells; always the same cells as storing bytes after every event."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest

from schemas.skill import Skill, load_skill
from streams.detect import store as store_mod
from streams.detect.batch import Batch
from streams.detect.faust_edge import bounded
from streams.detect.processor import DetectProcessor
from streams.detect.state import CellState, DetectConfig
from streams.detect.store import CellStore, ColdRef
from streams.errors import BadRecord
from streams.settings import Settings
from tests.integration.sample import load_sample
from tools.bench.detect_core import core_stream

CFG = DetectConfig(("default", "skeptical"), 30.0, 100.0, 0.5)


@pytest.fixture(scope="module")
def skill() -> Skill:
    return load_skill(Settings().skill_dir)


def _stream() -> list[bytes]:
    values = [v for _, v in load_sample().answers] + core_stream(3000, block=400)
    values += values[:50]  # redelivered at new offsets: duplicates
    return values


def _run(proc: DetectProcessor, store: CellStore, values: list[bytes], sizes: list[int],
         changelog: dict[bytes, bytes | None]) -> list[bytes]:
    out: list[bytes] = []
    i = 0
    for size in sizes:
        batch = Batch(proc, store.load, bounded)
        for off in range(i, min(i + size, len(values))):
            try:
                batch.answer(proc.validate(values[off]), ("answers", 0, off), 1000.0 + off / 100)
            except BadRecord:
                continue
        for _, key, value in store.write(batch.changed):
            changelog[key] = value
        out += [e.value for e, _ in batch.emits]
        i += size
    return out


def test_same_outputs_and_cells_as_bytes_after_every_event(skill: Skill) -> None:
    proc = DetectProcessor(skill, CFG)
    values = _stream()
    rng = random.Random(3)
    sizes = [rng.choice([1, 7, 50, 700, 2000]) for _ in range(len(values))]
    plain: dict[bytes, bytes] = {}  # bytes stored after every event, decoded every time
    want: list[bytes] = []
    for off, value in enumerate(values):
        batch = Batch(proc, lambda k: CellState.loads(plain[k]) if k in plain else None)
        try:
            batch.answer(proc.validate(value), ("answers", 0, off), 1000.0 + off / 100)
        except BadRecord:
            continue
        for key, ch in batch.changed.items():
            if ch.state is None:
                plain.pop(key, None)
            else:
                plain[key] = ch.raw
        want += [e.value for e, _ in batch.emits]
    small = CellStore({}, CFG, hot_max=40, block_cells=16)  # many cells cold, many blocks
    changelog: dict[bytes, bytes | None] = {}
    assert _run(proc, small, values, sizes, changelog) == want
    cells = dict(small.items())
    assert cells == {k: CellState.loads(v) for k, v in plain.items()}
    assert any(isinstance(v, ColdRef) for v in small.data.values())
    # the changelog alone (what recovery reads) gives the same cells, as plain JSON
    assert all(v is None or v[:1] == b"{" for v in changelog.values())
    assert {k: CellState.loads(v) for k, v in changelog.items() if v is not None} == cells


def test_a_pending_cell_is_not_decoded_again(skill: Skill, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    proc = DetectProcessor(skill, CFG)
    store = CellStore({}, CFG)
    first = orjson.loads(load_sample().answers[0][1])
    value = orjson.dumps(first)
    batch = Batch(proc, store.load, bounded)
    batch.answer(proc.validate(value), ("answers", 0, 0), 0.0)
    store.write(batch.changed)
    decoded: list[bytes] = []
    real = CellState.loads
    monkeypatch.setattr(store_mod.CellState, "loads", lambda raw: decoded.append(raw) or real(raw))
    (key,) = store.data
    assert store.load(key) is not None and decoded == []
    # recovery replaced the table's value: the new bytes are decoded, not the kept state
    restored = CellState(first_seen=5.0, partition=0).dumps()
    store.data[key] = restored
    state = store.load(key)
    assert decoded == [restored] and state is not None and state.first_seen == 5.0


def test_rebuild_decodes_only_restored_cells_and_forgets_deleted(
        skill: Skill, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = DetectProcessor(skill, CFG)
    store = CellStore({}, CFG, block_cells=2)
    _run(proc, store, [v for _, v in load_sample().answers][:40], [10] * 4, {})
    decoded: list[Any] = []
    real = CellState.loads
    monkeypatch.setattr(store_mod.CellState, "loads", lambda raw: decoded.append(raw) or real(raw))
    store.rebuild_index()
    assert decoded == []  # every cell was written by this store, cold or hot
    gone, *_ = list(store.data)
    del store.data[gone]  # e.g. a tombstone applied by recovery
    store.data[b"restored"] = CellState(first_seen=1.0, partition=2).dumps()
    store.rebuild_index()
    assert len(decoded) == 1
    assert (b"restored", 2) in store.index.overdue(1.0 + CFG.settle_seconds)
    assert all(k != gone for k, _ in store.index.overdue(1e12))


def test_cold_groups_are_smaller_than_their_cells(skill: Skill) -> None:
    proc = DetectProcessor(skill, CFG)
    store = CellStore({}, CFG, block_cells=64)
    _run(proc, store, [v for _, v in load_sample().answers], [2000], {})
    refs = [v for v in store.data.values() if isinstance(v, ColdRef)]
    assert refs
    blocks = {id(r.block): r.block for r in refs}
    plain = sum(r.end - r.start for r in refs)
    assert sum(len(b.blob) for b in blocks.values()) * 2 < plain
