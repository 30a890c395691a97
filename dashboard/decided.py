"""Every adjudication the page server has seen (read from the topic or written here), per
cell, newest last: which cells are decided, who decided before, and what each reviewer may
see of a blind or double-review cell (:mod:`dashboard.audit` chooses those). Pure.

A cell is *decided* (complete) when each of its review slots holds a decision: one slot, or
two for a double-review cell. Until then a reviewer sees the judge's answer of a blind cell
only after saving their own decision, and nobody sees another reviewer's decision."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dashboard.audit import AuditPlan, Claims
from schemas.chart_review import cell_key
from schemas.ids import canonical_json, derive_id


def _when(value: Any) -> str:
    return value if isinstance(value, str) else ""


class Decisions:
    """Every adjudication seen (from the topic or written here), newest last per cell."""

    def __init__(self, plan: AuditPlan | None = None) -> None:
        self._by_cell: dict[str, list[dict[str, Any]]] = {}
        self._ids: set[str] = set()
        self.plan = plan or AuditPlan()

    def add(self, value: Any) -> str | None:
        """Keep ``value``; returns its cell key, or None for a duplicate or a non-decision."""
        if not isinstance(value, dict):
            return None
        parts = [value.get(k) for k in ("task_id", "patient_id", "field_id")]
        if not all(isinstance(p, str) and p for p in parts):
            return None
        cell = cell_key(*parts)  # type: ignore[arg-type]
        aid = value.get("adjudication_id")
        if not isinstance(aid, str) or not aid:
            aid = derive_id("adjudication", canonical_json(value))  # written by another tool
            value = {**value, "adjudication_id": aid}
        if aid in self._ids:
            return None
        self._ids.add(aid)
        items = self._by_cell.setdefault(cell, [])
        items.append(value)
        items.sort(key=lambda v: _moment(v.get("adjudicated_at")))
        return cell

    def latest(self, cell: str, slot: int | None = None) -> dict[str, Any] | None:
        """The cell's latest decision (of review slot ``slot`` when given)."""
        items = [v for v in self._by_cell.get(cell, ()) if slot is None or slot_of(v) == slot]
        return items[-1] if items else None

    def history(self, cell: str) -> list[dict[str, Any]]:
        """Newest first."""
        return list(reversed(self._by_cell.get(cell, ())))

    def _filled(self, cell: str) -> set[int]:
        """The review slots of the cell that hold a decision."""
        return {slot_of(v) for v in self._by_cell.get(cell, ())}

    def decided(self, cell: str) -> bool:
        """Every review slot of the cell holds a decision (nothing left to do on it)."""
        return self.open_slots(cell) == 0

    def decided_by(self, cell: str, reviewer: str | None) -> bool:
        return reviewer is not None and any(
            v.get("adjudicator") == reviewer for v in self._by_cell.get(cell, ()))

    def todo(self, cell: str, reviewer: str | None) -> bool:
        """The cell still needs a review ``reviewer`` can give (not one of theirs)."""
        return not self.decided(cell) and not self.decided_by(cell, reviewer)

    def sees_judge(self, cell: str, reviewer: str | None) -> bool:
        """Whether ``reviewer`` may see the judge's answer: a verify cell, a cell they have
        decided, or one whose reviews are all done."""
        return (not self.plan.blind(cell) or self.decided_by(cell, reviewer)
                or self.decided(cell))

    def visible(self, cell: str, reviewer: str | None) -> list[dict[str, Any]]:
        """The history ``reviewer`` may see (newest first): everything once the cell is
        decided, else only their own decisions (a second reviewer never sees the first's)."""
        if self.decided(cell):
            return self.history(cell)
        return [v for v in self.history(cell) if reviewer and v.get("adjudicator") == reviewer]

    def next_slot(self, cell: str, reviewer: str) -> int:
        """The slot ``reviewer``'s save goes to: their own earlier slot, else the first
        empty one, else slot 1 (a later decision by someone else supersedes it, as before)."""
        items = self._by_cell.get(cell, ())
        own = [slot_of(v) for v in items if v.get("adjudicator") == reviewer]
        if own:
            return own[-1]
        filled = self._filled(cell)
        return next((s for s in range(1, self.plan.slots(cell) + 1) if s not in filled), 1)

    def open_slots(self, cell: str) -> int:
        return max(0, self.plan.slots(cell) - len(self._filled(cell)))

    def claim_slots(self, cell: str) -> int:
        """How many claims the cell holds: its open slots, and one on a decided cell (a
        reviewer correcting their decision holds it while they do)."""
        return max(1, self.open_slots(cell))

    def cells(self) -> list[str]:
        return list(self._by_cell)

    def __len__(self) -> int:
        return len(self._ids)


def held_by_others(decisions: Decisions, claims: Claims, cell: str, reviewer: str | None,
                   now: float) -> bool:
    """Other reviewers hold every claim of the cell and ``reviewer`` has not decided it (a
    reviewer's correction of their own decision needs no claim)."""
    return not decisions.decided_by(cell, reviewer) and not claims.free_for(
        cell, reviewer, decisions.claim_slots(cell), now)


def slot_of(value: dict[str, Any]) -> int:
    """An adjudication's review slot (absent: 1, the first review)."""
    return 2 if value.get("review_slot") == 2 else 1


def _moment(value: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(_when(value).replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
