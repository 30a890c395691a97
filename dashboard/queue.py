"""The work queue: one item per cell (its live judge result, or with a ``prompt_version``
filter that series' result: :meth:`dashboard.window.Window.queue_results`), pending or
decided, in the order a reviewer should work them. Pure.

Bands: the judge's ``fallback`` and ``flagged`` results first (the judge could not help or
broke a rule: a human must look), then ``disagreement``, ``low_confidence``, ``type_drift``
(a format question, least urgent); other kinds last. Oldest first within a band (by
``judged_at``, then by arrival), so nothing waits for ever behind newer work.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dashboard.decided import Decisions
from dashboard.rows import triage_row
from dashboard.window import FILTERS, JOBS, Window, is_live

KIND_BAND = {"disagreement": 1, "low_confidence": 2, "type_drift": 3}
STATES = ("pending", "decided", "all")
#: Every row field ``GET /api/queue`` documents (docs/api.md).
MAX_ITEMS = 500


def band(result: Mapping[str, Any]) -> int:
    if result.get("status") in ("fallback", "flagged"):
        return 0
    return KIND_BAND.get(str(result.get("kind")), 4)


def rank(result: Mapping[str, Any], seq: int) -> list[Any]:
    """The sort key, sent to the page so that it can insert live rows in place."""
    judged = result.get("judged_at")
    return [band(result), judged if isinstance(judged, str) else "", seq]


def queue_row(window: Window, decisions: Decisions, cell: str, seq: int,
              result: Mapping[str, Any]) -> dict[str, Any]:
    job = window.get(JOBS, str(result.get("job_id", "")))
    row = triage_row(result, job)
    latest = decisions.latest(cell)
    row.update({"result_id": row["id"], "cell": cell, "rank": rank(result, seq),
                "series": "live" if is_live(result) else "replay",
                "state": "decided" if latest else "pending",
                "decided_by": latest.get("adjudicator") if latest else None})
    return row


def items(window: Window, decisions: Decisions, filters: Mapping[str, str] | None = None,
          state: str = "pending", limit: int = MAX_ITEMS) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` items in queue order, and how many match in all."""
    wanted = {FILTERS[k]: v for k, v in (filters or {}).items() if k in FILTERS and v}
    chosen = []
    # the live result per cell; a prompt_version filter shows that series instead
    for cell, (seq, value) in window.queue_results(wanted.get("prompt_version")).items():
        if state != "all" and decisions.decided(cell) != (state == "decided"):
            continue
        if all(str(value.get(f, "")) == v for f, v in wanted.items()):
            chosen.append((rank(value, seq), cell, seq, value))
    chosen.sort(key=lambda item: item[0])
    rows = [queue_row(window, decisions, cell, seq, value)
            for _, cell, seq, value in chosen[:limit]]
    return rows, len(chosen)
