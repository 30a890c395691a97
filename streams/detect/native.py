"""The compiled fast path of the detector (``native/``, Rust), and what it must equal.

:class:`judgeflow_native.DetectCore` takes one answer record with its cell's stored bytes and
either returns what :func:`reference_answer` returns for it, byte for byte, or ``None``:
"not mine", and the caller takes the Python path (:meth:`Batch.answer`), which stays the
definition of every verdict and every error message. The compiled core handles the common
case only (a well-formed answer opening a cell or completing a pending one); anything else
(a bad record, a duplicate, a superseding answer, a decided cell, a value whose JSON it
cannot prove it writes as orjson does) is ``None``. The differential tests
(tests/unit/streams/test_detect_native.py, against
:func:`tests.unit.streams.native_reference.reference_answer`) hold the two equal.

The extension is optional: without a Rust toolchain ``make bootstrap`` says so and the
detector runs on the Python path alone (slower, same outputs).
"""

from __future__ import annotations

import logging
from typing import Any, Literal, Protocol

import orjson

from schemas.chart_review import MAX_JSON_DEPTH
from schemas.skill import Skill
from streams import limits
from streams.detect import fastpath
from streams.detect.state import MAX_HISTORY, MAX_SEEN_EVENTS, DetectConfig

log = logging.getLogger(__name__)

#: What the compiled core returns for a record it takes: the step's note, the cell's new
#: stored bytes, and what the due index and the outputs need (``emits``: kind, value, label).
NativeStep = tuple[str, bytes, float, float | None, int, tuple[tuple[str, bytes, str], ...]]


class Core(Protocol):
    def answer(self, key: bytes | None, value: bytes | None, state: bytes | None, topic: str,
               partition: int, offset: int, now: float, stamp: str) -> NativeStep | None: ...


def core_config(skill: Skill, cfg: DetectConfig) -> bytes:
    """Everything the compiled core decides with, as one JSON document (read once)."""
    criteria: dict[str, Any] = {}
    for field_id, criterion in skill.criteria.items():
        schema = criterion.answer_schema
        criteria[field_id] = {"type": schema.type, "enum": schema.enum, "unit": schema.unit,
                              "allows_no_info": schema.allows_no_info}
    return orjson.dumps({
        "expected_agents": list(cfg.expected_agents),
        "agents_by_task": {task: list(agents) for task, agents in cfg.agents_by_task.items()},
        "low_confidence_threshold": cfg.low_confidence_threshold,
        "criteria": criteria,
        "max_answer_bytes": limits.MAX_ANSWER_BYTES,
        "max_rationale_chars": limits.MAX_RATIONALE_CHARS,
        "max_reason_chars": limits.MAX_REASON_CHARS,
        "max_evidence_items": limits.MAX_EVIDENCE_ITEMS,
        "max_quote_chars": limits.MAX_QUOTE_CHARS,
        "max_cell_state_bytes": limits.MAX_CELL_STATE_BYTES,
        "max_seen_events": MAX_SEEN_EVENTS,
        "max_json_depth": MAX_JSON_DEPTH,
        "max_history": MAX_HISTORY,
    })


def load_core(skill: Skill, cfg: DetectConfig) -> Core | None:
    """The compiled core for this skill and configuration, or None (not built, or the
    answer model is not the one the fast path mirrors: then every record takes the model
    path, see :data:`streams.detect.fastpath.ENABLED`)."""
    if not fastpath.ENABLED:
        return None
    try:
        from judgeflow_native import DetectCore
    except ImportError:
        return None
    try:
        return DetectCore(core_config(skill, cfg))  # type: ignore[no-any-return]
    except (ValueError, TypeError, OverflowError) as exc:  # a configuration it cannot take
        log.warning("detect core: the compiled core refused this configuration (%s); the "
                    "Python path decides every record", type(exc).__name__)
        return None


#: ``JUDGEFLOW_DETECT_CORE``: ``auto`` takes the compiled core when it is built, ``compiled``
#: refuses to start without it, ``python`` never takes it (same outputs, slower).
CoreMode = Literal["auto", "compiled", "python"]


class CompiledCoreMissing(Exception):
    """``JUDGEFLOW_DETECT_CORE=compiled`` but the extension is not importable."""


def choose_core(mode: CoreMode, skill: Skill, cfg: DetectConfig) -> Core | None:
    if mode == "python":
        return None
    core = load_core(skill, cfg)
    if core is None and mode == "compiled":
        why = ("the answer model changed since the fast path was written"
               if not fastpath.ENABLED else "judgeflow_native is not installed or refused "
               "this configuration")
        raise CompiledCoreMissing(f"JUDGEFLOW_DETECT_CORE=compiled, but {why} (`make "
                                  "bootstrap` builds it with cargo; or set auto or python)")
    return core


def core_name(core: Core | None) -> str:
    """For the start-up line and the benchmarks."""
    if core is not None:
        return "compiled (judgeflow_native)"
    return "Python" + ("" if fastpath.ENABLED else " (the model path only)")
