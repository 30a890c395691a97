"""The offline checklist grader over the bundled requests (what `judgeflow demo` shows)."""

from __future__ import annotations

import asyncio

import pytest

from agents.debrief.grader import DebriefGrader
from agents.debrief.sampledata import load_requests
from agents.providers.factory import OfflineProvider
from agents.settings import Settings
from schemas.medkit import CaseEvaluation

EXPECTED = {  # request_id: (global verdict, safety breach kind, rubric source)
    "req-cp-001": ("excellent", None, "authored"),
    "req-cp-002": ("clear-fail", "missed_red_flag", "authored"),
    "req-cp-003": ("excellent", None, "authored"),
    "req-sep-001": ("excellent", None, "authored"),
    "req-sep-002": ("good", "contraindicated_drug", "authored"),
    "req-sep-003": ("satisfactory", "no_safety_netting", "authored"),
    "req-pf-001": ("excellent", None, "authored"),
    "req-pf-002": ("excellent", "no_safety_netting", "authored"),
    "req-pf-003": ("excellent", "contraindicated_drug", "authored"),
    "req-ank-001": ("excellent", None, "auto"),
    "req-ank-002": ("excellent", None, "auto"),
}


@pytest.fixture(scope="module")
def evaluations() -> dict[str, CaseEvaluation]:
    grader = DebriefGrader(Settings(), OfflineProvider())
    return {r.request_id: asyncio.run(grader.evaluate(r)) for r in load_requests()}


def test_every_bundled_request_gets_the_documented_outcome(
        evaluations: dict[str, CaseEvaluation]) -> None:
    assert len(evaluations) >= 10
    got = {rid: (ev.global_rating.verdict, ev.safety_breach.kind if ev.safety_breach else None,
                 ev.rubric_source) for rid, ev in evaluations.items()}
    assert got == EXPECTED


def test_offline_evaluations_are_fully_valid(evaluations: dict[str, CaseEvaluation]) -> None:
    for ev in evaluations.values():
        assert ev.provider == "offline" and ev.usage.cost_usd == 0
        assert ev.corrections == () and ev.unverified_quotes == ()
        if ev.safety_breach:
            assert ev.narrative.startswith("Safety breach:")


def test_grading_is_deterministic_and_the_id_depends_only_on_request_and_prompt() -> None:
    grader = DebriefGrader(Settings(), OfflineProvider())
    req = load_requests()[0]
    a, b = asyncio.run(grader.evaluate(req)), asyncio.run(grader.evaluate(req))
    skip = {"evaluated_at", "latency_ms"}
    assert a.model_dump(exclude=skip) == b.model_dump(exclude=skip)
    assert a.evaluation_id == grader.evaluation_id(req.request_id)
