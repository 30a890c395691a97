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

from dashboard.audit import JUDGE_FIELDS, Claims
from dashboard.decided import Decisions, held_by_others
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


def redact(row: dict[str, Any], decisions: Decisions, cell: str,
           reviewer: str | None) -> dict[str, Any]:
    """The row as ``reviewer`` may see it: a blind cell's judge answer removed (not even
    sent) until their own decision is saved; ``blind`` says it was withheld."""
    hidden = not decisions.sees_judge(cell, reviewer)
    if hidden:
        row.update(dict.fromkeys(JUDGE_FIELDS))
    row["blind"] = hidden
    return row


def queue_row(window: Window, decisions: Decisions, cell: str, seq: int,
              result: Mapping[str, Any], reviewer: str | None = None) -> dict[str, Any]:
    job = window.get(JOBS, str(result.get("job_id", "")))
    row = triage_row(result, job)
    seen = decisions.visible(cell, reviewer)
    done = not decisions.todo(cell, reviewer)
    row.update({"result_id": row["id"], "cell": cell, "rank": rank(result, seq),
                "series": "live" if is_live(result) else "replay",
                "state": "decided" if done else "pending",
                "decided_by": seen[0].get("adjudicator") if seen else None,
                "review_mode": decisions.plan.mode(cell),
                "reviews": decisions.plan.slots(cell)})
    return redact(row, decisions, cell, reviewer)


def items(window: Window, decisions: Decisions, filters: Mapping[str, str] | None = None,
          state: str = "pending", limit: int = MAX_ITEMS, reviewer: str | None = None,
          claims: Claims | None = None, now: float = 0.0
          ) -> tuple[list[dict[str, Any]], int]:
    """The first ``limit`` items in queue order, and how many match in all. ``pending``:
    the cells ``reviewer`` can still review (not theirs, not held by others on every open
    slot); ``decided``: decided by them or complete."""
    wanted = {FILTERS[k]: v for k, v in (filters or {}).items() if k in FILTERS and v}
    chosen = []
    # the live result per cell; a prompt_version filter shows that series instead
    for cell, (seq, value) in window.queue_results(wanted.get("prompt_version")).items():
        # a todo cell has an open slot, so its claim_slots are its open slots
        if state == "pending" and not (decisions.todo(cell, reviewer) and (
                claims is None or not held_by_others(decisions, claims, cell, reviewer, now))):
            continue
        if state == "decided" and decisions.todo(cell, reviewer):
            continue
        if all(str(value.get(f, "")) == v for f, v in wanted.items()):
            chosen.append((rank(value, seq), cell, seq, value))
    chosen.sort(key=lambda item: item[0])
    rows = [queue_row(window, decisions, cell, seq, value, reviewer)
            for _, cell, seq, value in chosen[:limit]]
    return rows, len(chosen)
