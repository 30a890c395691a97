"""A de-duplicated, newest-first window of the records the page shows; bounded except for
the work still to do.

Records arrive as decoded JSON objects from four streams, keyed by their id (a redelivered
or replayed record with the same id replaces the old one and counts as newest). Each stream
keeps about ``limit`` records, the oldest dropped first, but never the work list: the result
a pending cell shows in the queue (its live result, see :meth:`Window.queue_results`) and
that result's job stay however many there are, so the window bounds the memory of decided
and superseded rows only (trimmed in passes, ``limit // 10`` records of slack apart).

Values are read defensively: other helpers extend the contracts (a judge status
``"flagged"`` beside ``ok``/``fallback``), so any string is shown as it is.
What a row shows of a record is :mod:`dashboard.rows`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dashboard.rows import cell_of, job_answers, text, triage_row

RESULTS, JOBS, EVALUATIONS, CALIBRATION = "results", "jobs", "evaluations", "calibration"
STREAMS = (RESULTS, JOBS, EVALUATIONS, CALIBRATION)
#: Query parameter -> the row field it filters on.
FILTERS = {"task": "task_id", "criterion": "field_id", "kind": "kind", "status": "status",
           "prompt_version": "prompt_version"}


def record_id(stream: str, value: Mapping[str, Any]) -> str | None:
    """The de-duplication id of a record, or None when it has none (then it is skipped)."""
    if stream == RESULTS:
        return text(value.get("result_id")) or None
    if stream == JOBS:
        return text(value.get("job_id")) or None
    if stream == EVALUATIONS:
        return (text(value.get("evaluation_id")) or text(value.get("request_id"))) or None
    # One series per (task, criterion, prompt version): a newer record replaces the older
    # one (its calibration_id changes with its figures).
    parts = [text(value.get(k)) for k in ("task_id", "field_id", "prompt_version")]
    if any(parts):
        return "|".join(parts)
    return text(value.get("calibration_id")) or None


def is_live(result: Mapping[str, Any]) -> bool:
    """A live worker's result (its job's first), not a replay's: ``supersedes`` is empty."""
    return not result.get("supersedes")


@dataclass
class Entry:
    seq: int
    value: dict[str, Any]


class Window:
    """Per stream, the newest ``limit`` records by arrival, keyed by id."""

    def __init__(self, limit: int = 5000) -> None:
        if limit < 1:
            raise ValueError("the window must hold at least one record")
        self.limit = limit
        self._seq = 0
        self._data: dict[str, OrderedDict[str, Entry]] = {s: OrderedDict() for s in STREAMS}
        self._trim_at = {s: limit for s in STREAMS}
        #: Whether a cell is decided (set by the page server to its decisions): a pending
        #: cell's queue result and job are never dropped.
        self.decided: Callable[[str], bool] = lambda cell: False

    def add(self, stream: str, value: Any) -> str | None:
        """Store ``value``; return its id (None when it is not an object with an id)."""
        if stream not in self._data or not isinstance(value, dict):
            return None
        rid = record_id(stream, value)
        if rid is None:
            return None
        if stream == JOBS:  # only what the page shows of the agents' whole answers
            normalized = value.get("normalized")
            value = {"job_id": rid, "answers": job_answers(value),
                     "normalized": list(normalized) if isinstance(normalized, list) else [],
                     "cell": cell_of(value)}
        items = self._data[stream]
        self._seq += 1
        items.pop(rid, None)
        items[rid] = Entry(self._seq, value)
        if len(items) > self._trim_at[stream]:
            self._trim(stream)
        return rid

    def pinned(self) -> tuple[set[str], set[str]]:
        """The result ids and job ids of the work list: pending cells' queue results, and
        every job of a pending cell (a job is read before its result, which may come later)."""
        rids = {text(v.get("result_id")) for cell, (_, v) in self.queue_results().items()
                if not self.decided(cell)}
        jobs = {text(self._data[RESULTS][r].value.get("job_id")) for r in rids} | {
            jid for jid, e in self._data[JOBS].items()
            if text(e.value.get("cell")) != "||" and not self.decided(text(e.value.get("cell")))}
        return rids, jobs

    def _trim(self, stream: str) -> None:
        """Drop the oldest records that are not pinned until ``limit`` remain (or only pinned
        ones); the next pass comes ``limit // 10`` records later (amortised O(1) per add)."""
        items = self._data[stream]
        rids, jobs = self.pinned() if stream in (RESULTS, JOBS) else (set(), set())
        keep = rids if stream == RESULTS else jobs if stream == JOBS else set()
        excess = len(items) - self.limit
        for rid in [r for r in items if r not in keep][:max(0, excess)]:
            del items[rid]
        self._trim_at[stream] = max(self.limit, len(items)) + self.limit // 10

    def pending_beyond_limit(self) -> int:
        """How many pinned results the window holds over ``limit`` (reported, never lost)."""
        return max(0, len(self.pinned()[0]) - self.limit)

    def get(self, stream: str, rid: str) -> dict[str, Any] | None:
        items = self._data.get(stream)
        entry = items.get(rid) if items is not None else None
        return entry.value if entry else None

    def values(self, stream: str) -> list[dict[str, Any]]:
        """Newest first."""
        return [e.value for e in reversed(self._data[stream].values())]

    def __len__(self) -> int:
        return sum(len(items) for items in self._data.values())

    def row(self, rid: str) -> dict[str, Any] | None:
        result = self.get(RESULTS, rid)
        return None if result is None else triage_row(result, self.get(JOBS, text(
            result.get("job_id"))))

    def rows(self, filters: Mapping[str, str] | None = None,
             limit: int | None = None) -> list[dict[str, Any]]:
        """Triage rows, newest first, narrowed by ``filters`` (see :data:`FILTERS`)."""
        wanted = {FILTERS[k]: v for k, v in (filters or {}).items() if k in FILTERS and v}
        out = []
        for entry in reversed(self._data[RESULTS].values()):
            value = entry.value
            if all(str(value.get(f, "")) == v for f, v in wanted.items()):
                out.append(triage_row(value, self.get(JOBS, text(value.get("job_id")))))
                if limit is not None and len(out) >= limit:
                    break
        return out

    def queue_results(self, series: str | None = None) -> dict[str, tuple[int, dict[str, Any]]]:
        """Cell key -> (arrival, value) of the result a reviewer verifies.

        By default the cell's newest **live** result: one whose ``supersedes`` is empty,
        i.e. the first result of its job, which is what the live judge writes when a job
        comes in (a replay under another prompt version always finds that result and names
        it in ``supersedes``). A cell with replay results only shows its newest one. With
        ``series`` (a prompt version), the cell's newest result under that version."""
        live: dict[str, tuple[int, dict[str, Any]]] = {}
        other: dict[str, tuple[int, dict[str, Any]]] = {}
        for entry in self._data[RESULTS].values():
            v = entry.value
            cell = cell_of(v)
            if series is not None:
                if v.get("prompt_version") == series:
                    live[cell] = (entry.seq, v)
            elif is_live(v):
                live[cell] = (entry.seq, v)
            else:
                other[cell] = (entry.seq, v)
        for cell, item in other.items():
            live.setdefault(cell, item)
        return live

    def seq(self, stream: str, rid: str) -> int:
        entry = self._data[stream].get(rid)
        return entry.seq if entry else 0

    def facets(self) -> dict[str, list[str]]:
        """Distinct values of every filter over the window, for the filter menus."""
        seen: dict[str, set[str]] = {k: set() for k in FILTERS}
        for entry in self._data[RESULTS].values():
            for key, field in FILTERS.items():
                value = entry.value.get(field)
                if isinstance(value, str) and value:
                    seen[key].add(value)
        return {k: sorted(v) for k, v in seen.items()}
