"""Which agent answers what, when: cell plans, the event timeline and the ground truth.

Every cell gets a plan (answers of both agents plus the outcome it is meant to produce); the
events are then replayed through :func:`tools.sampledata.canon.simulate` and the simulated
outcome must equal the intended one, so the truth file and the scenario list cannot drift.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tools.sampledata import archetypes as a1
from tools.sampledata import archetypes_diagnosis as a2
from tools.sampledata import archetypes_kidney as a3
from tools.sampledata.answers import (
    DRIFT_CATEGORIES,
    LOW_REASONS,
    SKIP,
    Anchors,
    Quote,
    drift,
    rationale,
    truth_tags,
)
from tools.sampledata.canon import canonical, raw_format
from tools.sampledata.charts import Note, render
from tools.sampledata.profiles import Profile, Trap, truths
from tools.sampledata.skill_files import FIELD_IDS, TASK_ID, schema_of

AGENTS = ("default", "skeptical")
T0 = datetime(2024, 5, 6, 9, 0, tzinfo=UTC)
SLOT, RERUN_AT, END_AT = 9.0, 7200.0, 10800.0

Builder = Callable[[random.Random, str, int], Profile]
ROSTER: list[tuple[Builder, int]] = [
    (a1.t2dm_ckd_g3a, 4), (a1.t2dm_no_ckd, 3), (a1.t2dm_ckd_g3b_metformin_stopped, 2),
    (a1.prediabetes_famhx, 3), (a1.aki_recovered, 2), (a2.steroid_hyperglycemia, 2),
    (a2.type1_ckd, 2), (a3.sglt2_stopped, 2), (a2.gdm_history, 2), (a2.sparse_chart, 3),
    (a2.type3c, 2), (a3.ckd_labs_only, 2), (a3.ckd4_arb_stopped, 2), (a3.htn_retinopathy, 2),
    (a3.borderline_ckd, 1),
]

#: (archetype, variant, field) -> scenario for the hand-placed cells.
SPECIAL: dict[tuple[str, int, str], str] = {
    ("sglt2_stopped", 0, "on_sglt2i"): "rerun_fixes_disagreement",
    ("t2dm_ckd_g3b_metformin_stopped", 0, "current_dm_meds"): "rerun_identical_after_disagreement",
    ("t2dm_ckd_g3a", 1, "latest_egfr"): "rerun_breaks_agreement",
    ("t2dm_no_ckd", 0, "latest_hba1c"): "rerun_identical_agreement",
    ("htn_retinopathy", 1, "t2dm_dx"): "rerun_fixes_type_drift",
    ("type3c", 1, "latest_egfr"): "rerun_fixes_low_confidence",
    ("prediabetes_famhx", 1, "t2dm_dx"): "rerun_before_other_agent",
    ("ckd4_arb_stopped", 0, "ace_arb_use"): "stale_run_late",
    ("t2dm_ckd_g3a", 0, "diabetic_retinopathy"): "off_schema_answer",
    ("sparse_chart", 2, "ace_arb_use"): "agent_missing_crash",
    ("sparse_chart", 2, "insulin_use"): "agent_missing_crash",
    ("sparse_chart", 2, "diabetic_retinopathy"): "agent_missing_crash",
    ("type1_ckd", 1, "diabetic_retinopathy"): "agent_missing_crash",
}
#: Traps that must (True) or must not (False) fire, whatever the dice say.
FORCE_TRAP: dict[tuple[str, int, str], bool] = {
    ("sglt2_stopped", 0, "on_sglt2i"): True, ("sglt2_stopped", 1, "on_sglt2i"): True,
    ("t2dm_ckd_g3b_metformin_stopped", 0, "current_dm_meds"): True,
    ("prediabetes_famhx", 0, "t2dm_dx"): True, ("prediabetes_famhx", 1, "t2dm_dx"): True,
    ("ckd4_arb_stopped", 0, "ace_arb_use"): True, ("steroid_hyperglycemia", 0, "insulin_use"): True,
    ("aki_recovered", 0, "ckd_dx"): True, ("aki_recovered", 1, "ckd_dx"): True,
    ("ckd_labs_only", 0, "ckd_dx"): True, ("ckd_labs_only", 1, "ckd_dx"): True,
    ("t2dm_ckd_g3a", 1, "latest_egfr"): False, ("gdm_history", 0, "diabetes_type"): True,
    ("borderline_ckd", 0, "ckd_stage"): True, ("borderline_ckd", 0, "latest_egfr"): True,
    ("t2dm_ckd_g3a", 0, "diabetic_retinopathy"): False,
}
#: Lone gated answers that carry low confidence (-> a low_confidence job).
LONE_LOW = {("aki_recovered", 1), ("ckd_labs_only", 1)}
#: Cells whose (first) event is re-sent later with the same event_id.
DUPLICATES = [("t2dm_ckd_g3a", 2, "t2dm_dx", 61.0), ("prediabetes_famhx", 0, "t2dm_dx", END_AT),
              ("ckd_labs_only", 1, "ckd_stage", 45.0), ("sglt2_stopped", 0, "on_sglt2i", END_AT)]
#: Also re-send the first event of the first cell with each of these scenarios.
DUPLICATE_SCENARIOS = [("type_drift_", 75.0), ("low_confidence", 33.0)]
#: Cells where one agent cites a quote that is not in the note: (agent, note kind, quote, low).
INVENTED: dict[tuple[str, int, str], tuple[str, str, str, bool]] = {
    ("sglt2_stopped", 1, "on_sglt2i"): (
        "default", "endo", "Continue empagliflozin 10 mg daily for cardiorenal protection.", False),
    ("steroid_hyperglycemia", 0, "insulin_use"): (
        "default", "dc", "Discharged on insulin lispro 4 units with meals.", False),
    ("t2dm_no_ckd", 1, "latest_hba1c"): (
        "skeptical", "labs", "A1c was {v} percent on the most recent draw.", False),
    ("type1_ckd", 0, "diabetes_type"): (
        "default", "endo", "Type 1 diabetes diagnosed in childhood, on insulin ever since.", True),
}
N_DRIFT, N_LOW = 24, 20


@dataclass
class Ans:
    agent: str
    value: Any
    confidence: Any
    evidence: list[Quote]
    rationale: str
    reason: str | None = None
    run: str = ""
    emit: float = 0.0
    deliver: float | None = None
    invented: bool = False


@dataclass
class Cell:
    p: Profile
    variant: int
    field: str
    truth: Any
    scenario: str
    answers: list[Ans]
    expect: tuple[str, tuple[str, ...]]
    wrong: str | None = None
    index: int = 0
    reruns: list[Ans] = dataclasses.field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{TASK_ID}|{self.p.pid}|{self.field}"

    @property
    def sid(self) -> tuple[str, int, str]:
        return (self.p.archetype, self.variant, self.field)


@dataclass
class Patient:
    p: Profile
    variant: int
    notes: list[Note]
    anchors: Anchors


def build_patients(seed: int) -> list[Patient]:
    rng = random.Random(seed)
    roster = [(b, v) for b, n in ROSTER for v in range(n)]
    rng.shuffle(roster)
    out = []
    for i, (builder, v) in enumerate(roster, start=1):
        pid = f"P{i:03d}"
        prng = random.Random(f"{seed}:{pid}")
        p = builder(prng, pid, v)
        notes = render(p, prng)
        out.append(Patient(p, v, notes, Anchors(notes)))
    return out


class Planner:
    def __init__(self, seed: int, patients: list[Patient]) -> None:
        self.rng = random.Random(f"{seed}:answers")
        self.patients = patients
        self.cells: list[Cell] = []

    # -- single answers ----------------------------------------------------------------
    def conf(self, agent: str) -> Any:
        pool = (["high", "high", "high", 0.9, 0.95, 0.88, "medium"] if agent == "default"
                else ["medium", "medium", "high", 0.7, 0.75, 0.8, 0.85])
        return self.rng.choice(pool)

    def true_ans(self, pt: Patient, agent: str, fld: str, value: Any) -> Ans:
        if fld == "current_dm_meds" and agent == "skeptical" and isinstance(value, list):
            order = [m.key for m in pt.p.meds]
            value = sorted(value, key=order.index)
        limit = 3 if fld == "current_dm_meds" else 2
        if fld in ("on_sglt2i", "ace_arb_use", "insulin_use") and value in ("no", False):
            limit = 1
        ev = pt.anchors.pick(truth_tags(fld, value, pt.p), limit)
        if value not in ("no_info", None) and not ev:
            raise ValueError(f"{pt.p.pid}/{fld}: no evidence anchor for {value!r}")
        return Ans(agent, value, self.conf(agent), ev, rationale(fld, value))

    def trap_ans(self, pt: Patient, trap: Trap) -> Ans:
        ev = pt.anchors.pick([trap.tag]) if trap.tag else []
        if trap.tag and not ev:
            raise ValueError(f"{pt.p.pid}: trap anchor {trap.tag} missing")
        conf = self.rng.choice(["medium", "high", 0.62, 0.7, "medium"])
        return Ans(trap.agent, trap.value, conf, ev, trap.why)

    def make_low(self, ans: Ans, fld: str) -> None:
        ans.confidence = self.rng.choice(["low", 0.3, 0.35, 0.4, 0.45, "low"])
        ans.reason = LOW_REASONS[fld]

    # -- cells -------------------------------------------------------------------------
    def add(self, pt: Patient, fld: str, truth: Any, scenario: str, answers: list[Ans],
            expect: tuple[str, tuple[str, ...]], wrong: str | None = None) -> Cell:
        cell = Cell(pt.p, pt.variant, fld, truth, scenario, answers, expect, wrong)
        self.cells.append(cell)
        return cell

    def plan_patient(self, pt: Patient) -> None:
        t = truths(pt.p)
        says_ckd: dict[str, bool] = {}
        for fld in FIELD_IDS:
            if fld == "ckd_stage":
                self.plan_gated(pt, t, says_ckd)
                continue
            cell = self.plan_cell(pt, fld, t[fld])
            if fld == "ckd_dx":
                schema = schema_of(fld)
                says_ckd = {a.agent: canonical(a.value, schema) is True for a in cell.answers}

    def plan_cell(self, pt: Patient, fld: str, truth: Any) -> Cell:
        sid = (pt.p.archetype, pt.variant, fld)
        special = SPECIAL.get(sid, "")
        trap = pt.p.traps.get(fld)
        fire = trap is not None and FORCE_TRAP.get(sid, self.rng.random() < 0.7)
        answers = {ag: self.true_ans(pt, ag, fld, truth) for ag in AGENTS}
        if special == "agent_missing_crash":
            lone = "default" if pt.p.archetype == "sparse_chart" else "skeptical"
            return self.add(pt, fld, truth, special, [answers[lone]], ("agent_missing", ()))
        if special.startswith("rerun_") or special in ("stale_run_late", "off_schema_answer"):
            return self.plan_special(pt, fld, truth, special, answers, trap)
        wrong = None
        if fire and trap is not None:
            answers[trap.agent] = self.trap_ans(pt, trap)
            wrong = trap.agent
        scenario = special or ("disagreement" if wrong else "agreement")
        if wrong and fld in pt.p.ambiguity:
            scenario = pt.p.ambiguity[fld]
        expect: tuple[str, tuple[str, ...]] = (
            ("disagreement", ("disagreement",)) if wrong else ("agreement", ()))
        cell = self.add(pt, fld, truth, scenario, [answers[a] for a in AGENTS], expect, wrong)
        if sid in INVENTED:
            self.invent(pt, cell)
        return cell

    def invent(self, pt: Patient, cell: Cell) -> None:
        agent, kind, text, low = INVENTED[cell.sid]
        note = next(n for n in reversed(pt.notes) if n.kind == kind)
        ans = next(x for x in cell.answers if x.agent == agent)
        quote = text.format(v=ans.value)
        if quote in note.text:
            raise ValueError(f"invented quote is in the note: {quote}")
        start = note.text.index("\n", 200) + 1
        ans.evidence = [(note.note_id, quote, (start, start + len(quote))), *ans.evidence[:1]]
        ans.invented = True
        if low:
            self.make_low(ans, cell.field)
            cell.scenario, cell.expect = "low_confidence", ("low_confidence", ("low_confidence",))

    def plan_special(self, pt: Patient, fld: str, truth: Any, special: str,
                     ans: dict[str, Ans], trap: Trap | None) -> Cell:
        d, s = ans["default"], ans["skeptical"]
        if special == "off_schema_answer":
            q = pt.anchors.pick(["diabetic_retinopathy!maybe"])
            d = Ans("default", "maybe", "low", q, "Retinopathy status is uncertain in the notes.",
                    reason="Notes disagree on whether an eye examination was done.")
            return self.add(pt, fld, truth, special, [d, s], ("disagreement", ("disagreement",)),
                            wrong="default")
        if special == "rerun_fixes_type_drift":
            drifted = Ans("default", "Yes", d.confidence, d.evidence, d.rationale)
            cell = self.add(pt, fld, truth, special, [drifted, s], ("agreement", ("type_drift",)))
            cell.reruns = [d]
            return cell
        if special == "rerun_fixes_low_confidence":
            low = Ans("skeptical", s.value, s.confidence, s.evidence, s.rationale)
            self.make_low(low, fld)
            cell = self.add(pt, fld, truth, special, [d, low],
                            ("agreement", ("low_confidence",)))
            cell.reruns = [Ans("skeptical", s.value, 0.8, s.evidence, s.rationale)]
            return cell
        if special == "rerun_identical_agreement":
            cell = self.add(pt, fld, truth, special, [d, s], ("agreement", ()))
            cell.reruns = [Ans("skeptical", s.value, "high", s.evidence, s.rationale)]
            return cell
        assert trap is not None, special
        bad = self.trap_ans(pt, trap)
        if special == "rerun_breaks_agreement":
            cell = self.add(pt, fld, truth, special, [d, s], ("disagreement", ("disagreement",)),
                            wrong=trap.agent)
            cell.reruns = [bad]
            return cell
        if special == "rerun_fixes_disagreement":
            cell = self.add(pt, fld, truth, special, [bad, s] if trap.agent == "default"
                            else [d, bad], ("agreement", ("disagreement",)), wrong=trap.agent)
            cell.reruns = [ans[trap.agent]]
            return cell
        if special == "rerun_identical_after_disagreement":
            cell = self.add(pt, fld, truth, special, [bad, s], ("disagreement", ("disagreement",)),
                            wrong="default")
            again = Ans("default", list(reversed(bad.value)), 0.9, bad.evidence,
                        "Re-run: " + bad.rationale)
            cell.reruns = [again]
            return cell
        # rerun_before_other_agent / stale_run_late: default answers twice before the decision.
        retry = Ans("default", d.value, d.confidence, d.evidence, d.rationale, run="retry")
        cell = self.add(pt, fld, truth, special, [bad, retry, s], ("agreement", ()))
        return cell

    def plan_gated(self, pt: Patient, t: dict[str, Any], says_ckd: dict[str, bool]) -> None:
        fld = "ckd_stage"
        truth = t.get(fld, "no_info")
        agents = [a for a in AGENTS if says_ckd.get(a)]
        if len(agents) == 2:
            self.plan_cell(pt, fld, truth)
        elif len(agents) == 1:
            agent = agents[0]
            if pt.p.ckd:
                ans = self.true_ans(pt, agent, fld, truth)
            else:
                ans = self.trap_ans(pt, pt.p.traps[fld])
            low = (pt.p.archetype, pt.variant) in LONE_LOW
            if low:
                self.make_low(ans, fld)
            scenario = "agent_missing_low_confidence" if low else "agent_missing_gate"
            self.add(pt, fld, truth, scenario, [ans],
                     ("agent_missing", ("low_confidence",) if low else ()))

    # -- format drift and low confidence on plain agreeing cells ---------------------------
    def decorate(self) -> None:
        plain = [c for c in self.cells if c.scenario == "agreement" and len(c.answers) == 2
                 and not any(a.invented for a in c.answers)]
        self.rng.shuffle(plain)
        used: set[int] = set()
        flip = 0
        cats = list(DRIFT_CATEGORIES) + [self.rng.choice(DRIFT_CATEGORIES)
                                         for _ in range(N_DRIFT - len(DRIFT_CATEGORIES))]
        for cat in cats:
            for i, c in enumerate(plain):
                if i in used:
                    continue
                flip += 1
                who = c.answers[flip % 2]
                new = drift(cat, schema_of(c.field), who.value, flip)
                schema = schema_of(c.field)
                if new is SKIP or raw_format(new) == raw_format(who.value):
                    continue
                assert canonical(new, schema) == canonical(who.value, schema), (cat, new)
                who.value = new
                c.scenario, c.expect = f"type_drift_{cat}", ("type_drift", ("type_drift",))
                used.add(i)
                break
        lows = [c for i, c in enumerate(plain) if i not in used][:N_LOW]
        for n, c in enumerate(lows):
            self.make_low(c.answers[n % 2], c.field)
            c.scenario, c.expect = "low_confidence", ("low_confidence", ("low_confidence",))


def plan(seed: int, patients: list[Patient]) -> list[Cell]:
    planner = Planner(seed, patients)
    for pt in patients:
        planner.plan_patient(pt)
    planner.decorate()
    for i, cell in enumerate(planner.cells):
        cell.index = i
    return planner.cells


def _ts(seconds: float) -> str:
    t = T0 + timedelta(milliseconds=round(seconds * 1000))
    return f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z"


def _event(cell: Cell, ans: Ans) -> dict[str, Any]:
    key = f"{ans.run}|{cell.key}|{ans.agent}|{ans.emit:.3f}"
    ev: dict[str, Any] = {
        "schema_version": 1,
        "event_id": "evt-" + hashlib.sha256(key.encode()).hexdigest()[:24],
        "run_id": ans.run,
        "task_id": TASK_ID,
        "patient_id": cell.p.pid,
        "field_id": cell.field,
        "agent_id": ans.agent,
        "answer": ans.value,
        "evidence": [{"note_id": n, "quote": q, "offsets": list(o)} for n, q, o in ans.evidence],
        "rationale": ans.rationale,
        "confidence": ans.confidence,
    }
    if ans.reason:
        ev["low_confidence_reason"] = ans.reason
    ev["emitted_at"] = _ts(ans.emit)
    return ev


def timeline(seed: int, cells: list[Cell]) -> list[dict[str, Any]]:
    """All events in delivery (file) order."""
    rng = random.Random(f"{seed}:clock")
    queue: list[tuple[float, int, dict[str, Any]]] = []
    first: dict[str, dict[str, Any]] = {}

    def put(cell: Cell, ans: Ans, run: str, emit: float, deliver: float | None = None) -> None:
        ans.run, ans.emit = run, round(emit, 3)
        ev = _event(cell, ans)
        queue.append((deliver if deliver is not None else ans.emit, len(queue), ev))
        first.setdefault(cell.key + "|" + (run if run.endswith("-2") else ""), ev)

    reruns = 0
    for cell in cells:
        slot = cell.index * SLOT
        if cell.scenario in ("rerun_before_other_agent", "stale_run_late"):
            bad, retry, s = cell.answers
            stale = cell.scenario == "stale_run_late"
            put(cell, bad, "run-default-1", slot + 0.4, slot + 27.0 if stale else None)
            put(cell, retry, "run-default-1-retry", slot + (8.1 if stale else 4.2))
            put(cell, s, "run-skeptical-1", slot + (3.0 if stale else 12.5))
            continue
        for ans in cell.answers:
            lo, hi = (0.2, 4.0) if ans.agent == "default" else (6.0, 17.0)
            put(cell, ans, f"run-{ans.agent}-1", slot + rng.uniform(lo, hi))
        for ans in cell.reruns:
            put(cell, ans, f"run-{ans.agent}-2", RERUN_AT + reruns * 23.0 + rng.uniform(0, 5))
            reruns += 1
    by_sid = {c.sid: c for c in cells}
    picks = [(by_sid[(arch, v, fld)], delay) for arch, v, fld, delay in DUPLICATES]
    for prefix, delay in DUPLICATE_SCENARIOS:
        picks.append((next(c for c in cells if c.scenario.startswith(prefix)), delay))
    for cell, delay in picks:
        ev = first[cell.key + "|" + ("run-default-2" if cell.reruns else "")]
        at = delay if delay >= END_AT else _secs(ev["emitted_at"]) + delay
        queue.append((at, len(queue), dict(ev)))
        cell.scenario += "+duplicate"
    queue.sort(key=lambda x: (x[0], x[1]))
    return [ev for _, _, ev in queue]


def _secs(stamp: str) -> float:
    t = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return (t - T0).total_seconds()
