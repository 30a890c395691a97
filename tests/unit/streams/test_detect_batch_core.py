"""Batches with a compiled core (streams/detect/native.py) against batches on the Python path
alone: same outputs in the same order, same changelog bytes, same due times, same cells, over
streams with duplicates, redeliveries, bad records, superseding re-runs and settle/purge
ticks, in batches of any size, through the cell store (hot, cold and compressed cells).

Two cores: a double built on the oracle (``native_reference.reference_answer``, taking only
new answers, as the compiled core does), which tests the batch and store side of the seam on
any machine; and the compiled core itself, when it is built (on a machine with cargo it
must be: ``make bootstrap`` builds it)."""

from __future__ import annotations

import random
import shutil
import zlib
from typing import Any

import orjson
import pytest

from schemas.skill import Skill, load_skill
from streams.detect.batch import Batch
from streams.detect.faust_edge import bounded
from streams.detect.native import Core, NativeStep, load_core
from streams.detect.processor import DetectProcessor
from streams.detect.state import CellState, DetectConfig
from streams.detect.store import CellStore, ColdRef
from streams.errors import BadRecord
from streams.settings import Settings
from tests.integration.sample import load_sample
from tests.unit.streams.native_reference import reference_answer
from tests.unit.streams.test_detect_differential import _with_ticks, mutated, with_reruns
from tools.bench.detect_core import core_stream


class ReferenceCore:
    """The oracle as a core: takes what the compiled core takes (a new answer that changes
    its cell), declines the rest. Counts what it took."""

    def __init__(self, proc: DetectProcessor) -> None:
        self.proc = proc
        self.taken = 0

    def answer(self, key: bytes | None, value: bytes | None, state: bytes | None, topic: str,
               partition: int, offset: int, now: float, stamp: str) -> NativeStep | None:
        try:
            got = reference_answer(self.proc, key, value, state, topic, partition, offset, now)
        except (BadRecord, AssertionError):
            return None
        if got[0] != "new":
            return None
        self.taken += 1
        return got


def _cfg(agents: tuple[str, ...] = ("default", "skeptical")) -> DetectConfig:
    s = Settings()
    return DetectConfig(agents, 30.0, 100.0, s.low_confidence_threshold)


@pytest.fixture(scope="module")
def skill() -> Skill:
    return load_skill(Settings().skill_dir)


def _compiled(skill: Skill, cfg: DetectConfig) -> Core:
    core = load_core(skill, cfg)
    if core is None:
        if shutil.which("cargo"):
            pytest.fail("cargo is here but judgeflow_native is not installed: run "
                        "`make bootstrap` (it builds native/)")
        pytest.skip("judgeflow_native is not built (no cargo on this machine)")
    return core


def _records(values: list[bytes], rng: random.Random) -> list[tuple[bytes | None, bytes | None,
                                                                     str, float]]:
    """(key, value, topic, now): answers keyed by their cell (a few with a wrong or no key),
    duplicates and ticks."""
    out = []
    for (topic, key, value), now in _with_ticks(values, rng):
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


def _run(proc: DetectProcessor, core: Any, records: list[Any], sizes: list[int],
         cfg: DetectConfig) -> tuple[list[Any], list[Any], dict[bytes, CellState], CellStore]:
    store = CellStore({}, cfg, hot_max=40, block_cells=16)
    outputs: list[Any] = []
    changelog: list[Any] = []
    cold: list[bool] = []
    i = 0
    for size in sizes:
        if i >= len(records):
            break
        batch = Batch(proc, store.load, bounded, core, store.load_raw)
        for off in range(i, min(i + size, len(records))):
            key, value, topic, now = records[off]
            source = (topic, zlib.crc32(key or b"") % 3, off)  # a cell lives in one partition
            try:
                if topic == "ticks":
                    batch.tick(key, source, now)
                else:
                    batch.record(key, value, source, now)
            except BadRecord as exc:
                outputs.append(("dlq", exc.error_type, exc.message))
        outputs += [(e.kind, e.key, e.value, e.label, str(note)) for e, note in batch.emits]
        changelog += store.write(batch.changed)
        cold.append(any(isinstance(v, ColdRef) for v in store.data.values()))
        changelog.append(dict(store.index._due))  # when each cell is next due, and where
        i += size
    store.rebuild_index()
    assert any(cold)  # cells went cold and were read back from compressed blocks
    return outputs, changelog, dict(store.items()), store


def _streams(skill: Skill) -> list[list[bytes]]:
    rng = random.Random(10)
    sample = load_sample()
    changed = mutated(rng, 1500)
    return [[v for _, v in sample.answers] + sample.malformed, core_stream(3000, block=400),
            changed + [v for _, v in sample.answers], with_reruns(rng)]


def _check(skill: Skill, cfg: DetectConfig, make_core: Any) -> int:
    taken = 0
    for n, values in enumerate(_streams(skill)):
        rng = random.Random(n)
        records = _records(values, rng)
        sizes = [rng.choice([1, 3, 50, 700, 2000]) for _ in range(len(records))]
        proc = DetectProcessor(skill, cfg)
        want = _run(proc, None, records, sizes, cfg)
        core = make_core(proc)
        got = _run(proc, core, records, sizes, cfg)
        assert got[0] == want[0], f"stream {n}: outputs differ"
        assert got[1] == want[1], f"stream {n}: changelog or due times differ"
        assert got[2] == want[2], f"stream {n}: cells differ"
        assert got[3].index._due == want[3].index._due, f"stream {n}: due times differ"
        taken += getattr(core, "taken", 0)
    return taken


@pytest.mark.parametrize("agents", [("default", "skeptical"), ("default", "skeptical", "third"),
                                    ("default",)])
def test_batches_with_the_oracle_as_core_equal_the_python_path(skill: Skill,
                                                               agents: tuple[str, ...]) -> None:
    cfg = _cfg(agents)
    assert _check(skill, cfg, ReferenceCore) > 1000  # the core side of the seam was used


@pytest.mark.parametrize("agents", [("default", "skeptical"), ("default", "skeptical", "third"),
                                    ("default",)])
def test_batches_with_the_compiled_core_equal_the_python_path(skill: Skill,
                                                              agents: tuple[str, ...]) -> None:
    cfg = _cfg(agents)
    compiled = _compiled(skill, cfg)
    _check(skill, cfg, lambda proc: compiled)


def test_the_compiled_core_takes_the_benchmark_stream(skill: Skill) -> None:
    """The speed goal is read on this stream: the compiled core must take nearly all of it."""
    cfg = _cfg()
    compiled = _compiled(skill, cfg)
    proc = DetectProcessor(skill, cfg)
    values = core_stream(4000)
    store = CellStore({}, cfg)
    batch = Batch(proc, store.load, bounded, compiled, store.load_raw)
    for off, value in enumerate(values):
        d = orjson.loads(value)
        key = f"{d['task_id']}|{d['patient_id']}|{d['field_id']}".encode()
        batch.record(key, value, ("answers", 0, off), 1000.0)
    assert batch.declined <= len(values) // 100, batch.declined
