"""Which cells are blind or double-reviewed, claims, and what each reviewer may see (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from dashboard.audit import AuditPlan, Claims, draw
from dashboard.decided import Decisions

CELLS = {f: [f"t|P{i:05d}|{f}" for i in range(4000)] for f in ("ckd_stage", "egfr", "dm")}


def test_the_same_cells_on_every_run_whatever_the_order() -> None:
    plan = AuditPlan(0.1, 0.05)
    cells = CELLS["egfr"]
    first = {c for c in cells if plan.blind(c)}
    again = {c for c in reversed(cells) if AuditPlan(0.1, 0.05).blind(c)}
    assert first == again
    assert draw("t|P1|egfr") == draw("t|P1|egfr") != draw("t|P1|dm")


@pytest.mark.parametrize("field", sorted(CELLS))
def test_every_criterion_gets_its_share(field: str) -> None:
    plan = AuditPlan(0.1, 0.05)
    cells = CELLS[field]
    blind = sum(plan.blind(c) for c in cells) / len(cells)
    double = sum(plan.slots(c) == 2 for c in cells) / len(cells)
    # binomial, n = 4000: 4 standard errors either side
    assert abs(blind - 0.1) < 4 * (0.1 * 0.9 / 4000) ** 0.5
    assert abs(double - 0.05) < 4 * (0.05 * 0.95 / 4000) ** 0.5


def test_double_review_takes_blind_cells_first() -> None:
    cells = CELLS["dm"]
    plan = AuditPlan(0.1, 0.05)
    assert all(plan.blind(c) for c in cells if plan.slots(c) == 2)
    wide = AuditPlan(0.1, 0.2)  # more double than blind: every blind cell, then verify ones
    assert all(wide.slots(c) == 2 for c in cells if wide.blind(c))
    with pytest.raises(ValueError):
        AuditPlan(1.5)


def test_claims_hold_one_reviewer_per_open_slot_and_expire() -> None:
    claims = Claims(seconds=10)
    assert claims.claim("c", "alice", 1, now=0)
    assert not claims.claim("c", "bob", 1, now=5)  # a single-review cell: alice holds it
    assert claims.claim("c", "alice", 1, now=5)  # renewing is fine
    assert claims.claim("c", "bob", 1, now=16)  # alice's claim expired at 15
    assert claims.claim("d", "alice", 2, now=0) and claims.claim("d", "bob", 2, now=0)
    assert not claims.claim("d", "carol", 2, now=1)  # a double-review cell holds two
    claims.release("d", "bob")
    assert claims.claim("d", "carol", 2, now=1)
    assert claims.by_reviewer(now=2) == {"alice": 1, "bob": 1, "carol": 1}


def _adj(cell: str, who: str, slot: int | None = None, minute: int = 0) -> dict[str, Any]:
    task, patient, field = cell.split("|")
    return {"task_id": task, "patient_id": patient, "field_id": field, "adjudicator": who,
            "adjudication_id": f"{who}-{minute}", "review_slot": slot, "final_answer": "x",
            "adjudicated_at": f"2026-01-01T00:{minute:02d}:00Z"}


def test_a_double_review_cell_until_both_reviews_are_in() -> None:
    cell = next(c for c in CELLS["dm"] if AuditPlan(1.0, 1.0).slots(c) == 2)
    d = Decisions(AuditPlan(1.0, 1.0))
    assert d.todo(cell, "alice") and not d.sees_judge(cell, "alice")
    assert d.next_slot(cell, "alice") == 1
    d.add(_adj(cell, "alice", 1, minute=1))
    assert not d.decided(cell) and d.sees_judge(cell, "alice") and not d.todo(cell, "alice")
    assert d.todo(cell, "bob") and not d.sees_judge(cell, "bob")
    assert d.visible(cell, "bob") == [] and d.next_slot(cell, "bob") == 2
    assert d.latest(cell, 2) is None and d.open_slots(cell) == 1
    d.add(_adj(cell, "bob", 2, minute=2))
    assert d.decided(cell) and d.sees_judge(cell, "carol")
    assert [v["adjudicator"] for v in d.visible(cell, "carol")] == ["bob", "alice"]
    assert d.next_slot(cell, "alice") == 1 and d.next_slot(cell, "bob") == 2


def test_without_an_audit_plan_nothing_changes() -> None:
    d = Decisions()
    cell = "t|P1|dm"
    assert d.sees_judge(cell, None) and d.next_slot(cell, "a") == 1
    d.add(_adj(cell, "a", None))
    assert d.decided(cell) and d.visible(cell, None)[0]["adjudicator"] == "a"
    assert d.next_slot(cell, "b") == 1  # another reviewer supersedes, as before
