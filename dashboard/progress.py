"""Progress of the review work per reviewer and per criterion (``GET /api/progress``). Pure.

Per criterion, over the cells the queue shows (each cell's live result): how many cells,
how many are done (every review slot decided), how many are blind and double-review cells,
and how many double-review cells have both reviews. Per reviewer (pseudonym): the cells
they decided and the cells they hold now (claims)."""

from __future__ import annotations

from typing import Any

from dashboard.audit import Claims
from dashboard.decided import Decisions
from dashboard.window import Window


def progress(window: Window, decisions: Decisions, claims: Claims, now: float
             ) -> dict[str, Any]:
    criteria: dict[str, dict[str, int]] = {}
    for cell, (_, value) in window.queue_results().items():
        row = criteria.setdefault(str(value.get("field_id", "")), dict.fromkeys(
            ("cells", "done", "blind", "double", "double_done"), 0))
        done, double = decisions.decided(cell), decisions.plan.slots(cell) == 2
        row["cells"] += 1
        row["done"] += done
        row["blind"] += decisions.plan.blind(cell)
        row["double"] += double
        row["double_done"] += double and done
    reviewers: dict[str, dict[str, int]] = {}
    for cell in decisions.cells():
        for who in {str(v.get("adjudicator")) for v in decisions.history(cell)}:
            reviewers.setdefault(who, {"decided": 0, "holding": 0})["decided"] += 1
    for who, n in claims.by_reviewer(now).items():
        reviewers.setdefault(who, {"decided": 0, "holding": 0})["holding"] = n
    return {"criteria": [{"field_id": k, **v} for k, v in sorted(criteria.items())],
            "reviewers": [{"reviewer": k, **v} for k, v in sorted(reviewers.items())],
            "blind_share": decisions.plan.blind_share,
            "double_share": decisions.plan.double_share}
