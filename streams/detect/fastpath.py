"""Input validation without pydantic for the canonical record shape.

:func:`fast_answer` accepts an ``AgentAnswer`` only when it can prove that the model would
accept it *and* dump it (``model_dump(mode="json")``) to exactly the same JSON; for anything
else it returns ``None`` and the caller validates with the model, so acceptance and error
messages stay the model's. :class:`PlainAnswer` is what the hot path passes around: the
attributes ``decide`` and the state machine read, plus the answer's JSON form (as stored in
the cell and copied into jobs).

The accepted shape is tied to the model: :data:`ENABLED` is false (every record takes the
model path) when ``AgentAnswer``'s JSON schema is not the one this module was written for.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from itertools import combinations, permutations
from typing import Any

from schemas.base import _SAFE_ID
from schemas.chart_review import AgentAnswer, CellKeyed, cell_key, check_json_value
from schemas.ids import canonical_json, derive_id
from streams import limits

_FIELDS = ("schema_version", "event_id", "run_id", "task_id", "patient_id", "field_id",
           "agent_id", "answer", "evidence", "rationale", "confidence",
           "low_confidence_reason", "emitted_at")
_FIELD_SET = frozenset(_FIELDS)
_REQUIRED_SET = frozenset(("event_id", "run_id", "task_id", "patient_id", "field_id",
                           "agent_id", "emitted_at"))
_LABELS = frozenset(("low", "medium", "high"))
#: ``YYYY-MM-DDTHH:MM:SS[.ffffff](Z|+HH:MM|-HH:MM)``: the spellings whose pydantic dump is known.
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(\d{1,6}))?(Z|[+-]\d\d:\d\d)")
#: Offsets that pydantic writes as ``Z`` (any other is written as ``datetime`` formats it).
_UTC = frozenset(("Z", "+00:00", "-00:00"))
#: Four safe ids joined by ``|`` (not an id character, so the parts cannot run together).
_SAFE_PART = r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}"
_SAFE_IDS = re.compile(r"\|".join([_SAFE_PART] * 4))
_RATIONALE_MAX, _REASON_MAX = limits.MAX_RATIONALE_CHARS, limits.MAX_REASON_CHARS
_EVIDENCE_MAX, _QUOTE_MAX = limits.MAX_EVIDENCE_ITEMS, limits.MAX_QUOTE_CHARS
#: sha256 of ``AgentAnswer.model_json_schema()`` this module mirrors (see module docstring).
SCHEMA_SHA = "d4bff6df5520e61f957600b05061728dbc49a9f9c74d6890ad92333f18683109"


def schema_sha() -> str:
    schema = AgentAnswer.model_json_schema()
    return derive_id(canonical_json(schema), length=None)


ENABLED = schema_sha() == SCHEMA_SHA


class PlainAnswer(CellKeyed):
    """An accepted answer as plain data; duck-types the parts of ``AgentAnswer`` we read."""

    __slots__ = ("_emitted_at", "_key", "agent_id", "answer", "confidence", "event_id",
                 "field_id", "json", "patient_id", "run_id", "task_id")

    def __init__(self, json: dict[str, Any], emitted_at: datetime | None,
                 key: str | None = None) -> None:
        self.json = json
        self._key = key
        self.event_id: str = json["event_id"]
        self.run_id: str = json["run_id"]
        self.task_id: str = json["task_id"]
        self.patient_id: str = json["patient_id"]
        self.field_id: str = json["field_id"]
        self.agent_id: str = json["agent_id"]
        self.answer: Any = json["answer"]
        self.confidence: str | float = json["confidence"]
        self._emitted_at = emitted_at

    @property
    def emitted_at(self) -> datetime:
        """Parsed on first use: a stored answer is decided again without reading it."""
        if self._emitted_at is None:
            self._emitted_at = datetime.fromisoformat(self.json["emitted_at"])
        return self._emitted_at

    @property
    def key(self) -> str:
        """The cell key (built once: the fast path has it from its id check)."""
        if self._key is None:
            self._key = cell_key(self.task_id, self.patient_id, self.field_id)
        return self._key

    # The free-text fields, for the size limits (streams/limits.py reads them by name).
    @property
    def rationale(self) -> str:
        return str(self.json["rationale"])

    @property
    def low_confidence_reason(self) -> str | None:
        return self.json["low_confidence_reason"]  # type: ignore[no-any-return]

    @property
    def evidence(self) -> list[dict[str, Any]]:
        return self.json["evidence"]  # type: ignore[no-any-return]

    def model_dump(self, mode: str = "json") -> dict[str, Any]:
        return self.json

    @classmethod
    def from_model(cls, model: AgentAnswer) -> PlainAnswer:
        return cls(model.model_dump(mode="json"), model.emitted_at)

    @classmethod
    def from_stored(cls, json: dict[str, Any]) -> PlainAnswer:
        """A stored answer (validated when it arrived, dumped by us): no re-validation."""
        return cls(json, None)


def iso_json(at: datetime) -> str:
    """A timezone-aware datetime as pydantic's JSON mode writes it."""
    text = at.isoformat()
    if at.utcoffset() == timedelta(0):
        text = text[:-6] + "Z"
    return text


_EVIDENCE_KEYS = ("note_id", "quote", "offsets")
#: Every order of every subset of the evidence keys: a tuple lookup instead of a set
#: comparison per item.
_EVIDENCE_ORDERS = frozenset(order for n in range(4) for subset in combinations(_EVIDENCE_KEYS, n)
                             for order in permutations(subset))
#: Note ids already checked (a cell's evidence cites the same few notes): bounded, cleared
#: when full.
_NOTES_OK: set[str] = set()
_NOTES_MAX = 4096
#: Key orders of records already accepted: the records of one producer share one order, and
#: a tuple lookup costs a third of the two set comparisons. Only accepted orders are kept
#: (their keys are our field names, so an entry is small); bounded, cleared when full, as
#: every cache of the detect core.
_KEY_ORDERS: set[tuple[str, ...]] = set()
_KEY_ORDERS_MAX = 256


def _evidence(items: list[Any]) -> list[dict[str, Any]] | None:
    """Evidence items as the model dumps them, or None (ask the model)."""
    out = []
    for item in items:
        if type(item) is not dict or tuple(item) not in _EVIDENCE_ORDERS:
            return None
        note, quote, offsets = item.get("note_id"), item.get("quote"), item.get("offsets")
        if type(quote) is not str or type(note) is not str:
            return None
        if note not in _NOTES_OK:
            if _SAFE_ID.fullmatch(note) is None or ".." in note:
                return None
            if len(_NOTES_OK) >= _NOTES_MAX:
                _NOTES_OK.clear()
            _NOTES_OK.add(note)
        if offsets is not None:
            if (type(offsets) is not list or len(offsets) != 2 or type(offsets[0]) is not int
                    or type(offsets[1]) is not int or not 0 <= offsets[0] <= offsets[1]):
                return None
            offsets = [offsets[0], offsets[1]]
        out.append({"note_id": note, "quote": quote, "offsets": offsets})
    return out


def within_limits(json: dict[str, Any]) -> bool:
    """Are the free-text fields within :mod:`streams.limits`? (Only a ``False`` needs
    ``limits.text_problems``, which names what is over.)"""
    evidence = json["evidence"]
    if (len(json["rationale"]) > _RATIONALE_MAX or len(evidence) > _EVIDENCE_MAX
            or len(json["low_confidence_reason"] or "") > _REASON_MAX):
        return False
    for item in evidence:  # noqa: SIM110 - a loop costs less than all() over a generator
        if len(item["quote"]) > _QUOTE_MAX:
            return False
    return True


def fast_answer(data: dict[str, Any]) -> PlainAnswer | None:
    """``data`` (a decoded JSON object) as a PlainAnswer, or None: ask the model."""
    if not ENABLED or len(data) > len(_FIELDS):
        return None
    order = tuple(data)
    if order not in _KEY_ORDERS:
        if not _REQUIRED_SET <= data.keys() <= _FIELD_SET:
            return None
        if len(_KEY_ORDERS) >= _KEY_ORDERS_MAX:
            _KEY_ORDERS.clear()
        _KEY_ORDERS.add(order)
    task, patient, field, agent = (data["task_id"], data["patient_id"], data["field_id"],
                                   data["agent_id"])
    try:  # join refuses anything but strings
        ids = "|".join((task, patient, field, agent))
    except TypeError:
        return None
    event, run = data["event_id"], data["run_id"]
    if (_SAFE_IDS.fullmatch(ids) is None or ".." in ids
            or type(event) is not str or not 1 <= len(event) <= 200 or not event.isascii()
            or type(run) is not str or not 1 <= len(run) <= 200 or not run.isascii()):
        return None
    version = data.get("schema_version", 1)
    evidence = data.get("evidence", [])
    rationale = data.get("rationale", "")
    confidence = data.get("confidence", "medium")
    reason = data.get("low_confidence_reason")
    stamp = data["emitted_at"]
    if (type(version) is not int or type(evidence) is not list
            or type(rationale) is not str or (reason is not None and type(reason) is not str)
            or type(stamp) is not str):
        return None
    if not ((type(confidence) is str and confidence in _LABELS)
            or (type(confidence) is float and 0.0 <= confidence <= 1.0)):
        return None
    parts = _STAMP.fullmatch(stamp)
    if parts is None:
        return None
    quotes = _evidence(evidence) if evidence else []
    if quotes is None:
        return None
    answer = data.get("answer")
    if type(answer) is list or type(answer) is dict:
        try:
            check_json_value(answer)  # nesting bound: the model's message is the verdict
        except ValueError:
            return None
    try:
        at = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    json = {"schema_version": version, "event_id": event, "run_id": run,
            "task_id": task, "patient_id": patient, "field_id": field, "agent_id": agent,
            "answer": answer, "evidence": quotes, "rationale": rationale,
            "confidence": confidence, "low_confidence_reason": reason,
            "emitted_at": _stamp_json(stamp, parts, at)}
    return PlainAnswer(json, at, ids[:ids.rindex("|")])


def _stamp_json(stamp: str, parts: re.Match[str], at: datetime) -> str:
    """``iso_json(at)`` from the text itself when the offset is UTC (``datetime.isoformat``
    costs more than the rest of the record's checks): the same seconds, the fraction padded
    to microseconds and left out when zero, ``Z``. Other offsets may be normalised
    (``+05:60`` is ``+06:00``): formatted from the datetime."""
    frac, offset = parts.group(1, 2)
    if offset not in _UTC:
        return iso_json(at)
    if frac is None or not frac.strip("0"):
        return stamp[:19] + "Z"
    return f"{stamp[:19]}.{frac.ljust(6, '0')}Z"
