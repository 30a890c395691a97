"""A small calibration scenario worked out by hand; shared by the unit and broker tests.

Task T, criterion ``f``, version ``v1``: five cells judged, four adjudicated.

| cell | status   | suggested | hint          | judge corr | cost | reviewer final / class / corr |
| c1   | ok       | yes       | agent_a_error | agent_b    | 0.01 | yes / agent_a_error / agent_b |
| c2   | ok       | no        | agent_b_error | agent_a    | 0.02 | yes / agent_b_error / agent_a |
| c3   | ok       | no        | agent_a_error | agent_b    | 0.03 | no  / agent_b_error / agent_a |
| c4   | fallback | null      | n_a           | n_a        | 0.04 | no  / n_a           / -       |
| c5   | ok       | yes       | n_a           | both       | 0.00 | (not adjudicated)             |

Noise that must not count: an older v1 result for c2 (suggested "yes"), an older
adjudication of c3 (final "yes") delivered after the newer one, a duplicate of c1's result.

Hand calculation for v1 (non-fallback adjudicated cells: c1, c2, c3):
* answer accuracy: c1 yes=yes, c2 no!=yes, c3 no=no -> 2/3
* classification pairs (reviewer, judge): (a,a) (b,b) (b,a): p_o = 2/3;
  reviewer a:1 b:2, judge a:2 b:1 -> p_e = (1*2 + 2*1)/9 = 4/9;
  kappa = (2/3 - 4/9) / (1 - 4/9) = (2/9) / (5/9) = 0.4
* confusion: row agent_a_error = [1,0,0,0,0]; row agent_b_error = [1,1,0,0,0]
* agent_correctness: (b,b) (a,a) (a,b) -> 2/3
* fallback: 1 of 5 judged; cost 0.10 USD, 0.02 per cell
* version ``v2`` judged c1 "yes" and c2 "yes": changed suggestions vs v1 = 1 of 2 (c2);
  v2 accuracy: c1 yes=yes, c2 yes=yes -> 2/2; v2 kappa: pairs (a,a) (b,b): p_o = 1,
  p_e = (1*1 + 1*1)/4 = 0.5, kappa = 1; fallback 0/2; cost 0.05 + 0.05 = 0.10, 0.05 per cell
* cell outcomes of ``f``: 3 agreement, 1 type_drift, 2 disagreement, 1 low_confidence,
  1 agent_missing -> the agents agreed on 4 of 6 comparable cells
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from schemas.calibration import Adjudication
from schemas.chart_review import CellOutcome, JudgeAnalysis, JudgeResult, Usage

TASK, FIELD = "T", "f"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def result(cell: str, version: str, suggested: Any, hint: str, corr: str, cost: float, *,
           status: str = "ok", minute: int = 10) -> JudgeResult:
    return JudgeResult(
        result_id=f"r-{cell}-{version}-{minute}", job_id=f"j-{cell}", task_id=TASK,
        patient_id=cell, field_id=FIELD, kind="disagreement", status=status,  # type: ignore[arg-type]
        analysis=JudgeAnalysis(suggested_answer=suggested, reasoning="r",
                               agent_correctness=corr, classification_hint=hint,  # type: ignore[arg-type]
                               judge_confidence="medium"),
        prompt_version=version, provider="offline", model="m",
        usage=Usage(cost_usd=cost), judged_at=T0 + timedelta(minutes=minute))


def adjudication(cell: str, final: Any, klass: str, corr: str | None, *,
                 minute: int = 20) -> Adjudication:
    return Adjudication(task_id=TASK, patient_id=cell, field_id=FIELD, final_answer=final,
                        classification=klass, agent_correctness=corr,  # type: ignore[arg-type]
                        adjudicator="rev-1", adjudicated_at=T0 + timedelta(minutes=minute))


def outcome(i: int, kind: str) -> CellOutcome:
    return CellOutcome(outcome_id=f"o{i}", outcome=kind, task_id=TASK,  # type: ignore[arg-type]
                       patient_id=f"c{i}", field_id=FIELD, agents=("a", "b"), decided_at=T0)


def results() -> list[JudgeResult]:
    c1 = result("c1", "v1", "yes", "agent_a_error", "agent_b", 0.01)
    return [
        result("c2", "v1", "yes", "agent_b_error", "agent_a", 0.02, minute=5),  # superseded
        c1, c1,  # duplicate delivery
        result("c2", "v1", "no", "agent_b_error", "agent_a", 0.02),
        result("c3", "v1", "no", "agent_a_error", "agent_b", 0.03),
        result("c4", "v1", None, "n_a", "n_a", 0.04, status="fallback"),
        result("c5", "v1", "yes", "n_a", "both", 0.0),
        result("c1", "v2", "yes", "agent_a_error", "agent_b", 0.05),
        result("c2", "v2", "yes", "agent_b_error", "agent_a", 0.05),
    ]


def adjudications() -> list[Adjudication]:
    return [
        adjudication("c1", "yes", "agent_a_error", "agent_b"),
        adjudication("c2", "yes", "agent_b_error", "agent_a"),
        adjudication("c3", "no", "agent_b_error", "agent_a"),
        adjudication("c3", "yes", "agent_a_error", "agent_b", minute=15),  # older, late
        adjudication("c4", "no", "n_a", None),
    ]


def outcomes() -> list[CellOutcome]:
    kinds = ["agreement"] * 3 + ["type_drift"] + ["disagreement"] * 2 + [
        "low_confidence", "agent_missing"]
    return [outcome(i, k) for i, k in enumerate(kinds)]
