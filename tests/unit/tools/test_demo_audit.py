"""The demo's audit on the sample: blind cells marked by the page's own plan, a second
review of every double-review cell by another reviewer, all valid adjudications; the
summary prints blind vs verify and the human baseline with intervals."""

from __future__ import annotations

import io

import orjson

from agents.settings import Settings
from dashboard.audit import AuditPlan
from schemas.calibration import Adjudication
from streams.sampledata import DATA_DIR
from tools.demo.audit import DEMO_BLIND, DEMO_DOUBLE, SECOND, agent_answers, audited
from tools.demo.report import pooled, report
from tools.demo.tally import Seen


def _sample() -> list[Adjudication]:
    lines = (DATA_DIR / "adjudications.jsonl").read_bytes().splitlines()
    answers = agent_answers((DATA_DIR / "answers.jsonl").read_bytes().splitlines())
    return [Adjudication.model_validate_json(x) for x in audited(lines, answers)]


def test_the_sample_is_audited_by_the_pages_plan() -> None:
    plan = AuditPlan(DEMO_BLIND, DEMO_DOUBLE)
    adjs = _sample()
    firsts = [a for a in adjs if a.review_slot == 1]
    seconds = {a.key: a for a in adjs if a.review_slot == 2}
    assert len(firsts) == 97  # every sample decision, once, in slot 1
    assert all(a.review_mode == plan.mode(a.key) for a in adjs)
    assert set(seconds) == {a.key for a in firsts if plan.slots(a.key) == 2}
    assert all(s.adjudicator == SECOND != "synthetic-reviewer-1" for s in seconds.values())
    # the made-up second reviewer disagrees on some cells, not all
    differ = [a.key for a in firsts if a.key in seconds and orjson.dumps(
        seconds[a.key].final_answer) != orjson.dumps(a.final_answer)]
    assert 0 < len(differ) < len(seconds)
    assert _sample() == adjs  # deterministic


def test_the_summary_prints_modes_and_the_human_baseline() -> None:
    fig = {"hits": 3, "n": 4, "rate": 0.75, "ci95": [0.3, 0.95]}
    mode = {"answer_accuracy": fig}
    rec = {"task_id": "t", "field_id": "meds", "prompt_version": "judge-v3+abc",
           "cells_judged": 4, "cells_adjudicated": 4, "answer_accuracy": fig,
           "classification_kappa": 0.5, "kappa_ci95": [0.1, 0.9], "ac1": 0.6,
           "fallback": {"hits": 0, "n": 4, "rate": 0.0, "ci95": [0.0, 0.49]},
           "by_review_mode": {"blind": mode, "verify": mode,
                              "verify_minus_blind": {"estimate": 0.0, "ci95": [-0.5, 0.5]}},
           "human_agreement": {"n": 4, "percent": fig, "kappa": 0.4, "kappa_ci95": [0, 0.8],
                               "ac1": 0.5}}
    seen = Seen()
    seen.calibration["t|meds|judge-v3+abc"] = rec
    out = io.StringIO()
    report(seen, Settings(), out)
    text = out.getvalue()
    assert "3/4 75% [30%, 95%]" in text and "0.50 [0.10, 0.90]" in text
    assert "Blind audit and the human baseline" in text and "+0% [-50%, +50%]" in text
    p = pooled([rec, {**rec, "prompt_version": "v2"}])
    assert (p["blind"]["hits"], p["blind"]["n"]) == (6, 8)
    assert (p["human"]["hits"], p["human"]["n"]) == (3, 4)  # one criterion counted once
