"""The calibration figures issue 27 added, from joined (adjudication, judge result) pairs:
intervals, AC1, answer-level kappa, figures per review mode, the human baseline and the
agents' agreement for any number of agents. Pure; how each is computed: docs/calibration.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

from agents.calibrate.intervals import Z95, ac1_pairs, fleiss_kappa, kappa_with_ci
from agents.calibrate.intervals import wilson as wilson_ci
from agents.calibrate.metrics import Ratio, agreement
from schemas.calibration import (
    Adjudication,
    Difference,
    Figure,
    HumanAgreement,
    ModeFigures,
    PairAgreement,
    ReviewModes,
)
from schemas.chart_review import CellOutcome, JudgeJob, JudgeResult
from schemas.ids import canonical_json
from schemas.skill import AnswerSchema
from streams.detect.normalize import Invalid, canonicalize, format_signature, to_json_value

Pair = tuple[Adjudication, JudgeResult]


def figure(r: Ratio) -> Figure:
    return Figure(hits=r.hits, n=r.n, rate=r.value, ci95=wilson_ci(r.hits, r.n))


def answer_label(value: Any, schema: AnswerSchema | None) -> str:
    """An answer as a category: its canonical JSON under the criterion's schema (``true``
    and ``"yes"`` are one category), else its spelling."""
    if schema is not None:
        canon = canonicalize(value, schema)
        if not isinstance(canon, Invalid):
            return canonical_json(to_json_value(canon))
    return format_signature(value)


def answer_scale(schema: AnswerSchema | None) -> list[str]:
    """The answer categories of a closed scale (boolean, enum): AC1 counts every category
    of the scale, used or not; open answers (numbers, dates, lists) have only those seen."""
    if schema is None or schema.type not in ("boolean", "enum") or not schema.enum:
        return []
    return list(dict.fromkeys(answer_label(v, schema) for v in schema.enum))


def mode_of(a: Adjudication) -> str:
    return a.review_mode or "verify"


def mode_figures(judged: Sequence[Pair], klass: Sequence[tuple[str, str]],
                 labels: Sequence[str], schema: AnswerSchema | None) -> ModeFigures:
    """Accuracy, classification agreement, kappa and AC1 over ``judged`` (non-fallback)."""
    hits = sum(1 for a, r in judged if r.analysis.suggested_answer is not None
               and answer_label(r.analysis.suggested_answer, schema)
               == answer_label(a.final_answer, schema))
    kappa, kci = kappa_with_ci(klass)
    ac1, _ = ac1_pairs(klass, labels)
    return ModeFigures(cells_adjudicated=len(judged),
                       answer_accuracy=figure(Ratio(hits, len(judged))),
                       classification_agreement=figure(agreement(klass)),
                       classification_kappa=kappa, kappa_ci95=kci, ac1=ac1)


def newcombe(a: Ratio, b: Ratio, z: float = Z95) -> Difference:
    """``a - b`` for two independent proportions with Newcombe's (1998, method 10) hybrid
    score interval, built from each proportion's Wilson interval."""
    if a.n == 0 or b.n == 0:
        return Difference()
    pa, pb = a.hits / a.n, b.hits / b.n
    la, ua = wilson_ci(a.hits, a.n, z) or (0.0, 1.0)
    lb, ub = wilson_ci(b.hits, b.n, z) or (0.0, 1.0)
    d = pa - pb
    low = d - math.sqrt((pa - la) ** 2 + (ub - pb) ** 2)
    high = d + math.sqrt((ua - pa) ** 2 + (pb - lb) ** 2)
    return Difference(estimate=round(d, 6), ci95=(round(max(-1.0, low), 6),
                                                   round(min(1.0, high), 6)))


def by_review_mode(judged: Sequence[Pair], klass: Sequence[tuple[str, str]],
                   labels: Sequence[str], schema: AnswerSchema | None) -> ReviewModes | None:
    """The judge's figures on blind and on verify cells, and verify minus blind accuracy.
    None when no adjudication of the group was blind (no audit ran: nothing to split)."""
    if not any(mode_of(a) == "blind" for a, _ in judged):
        return None
    split = {m: ([p for p in judged if mode_of(p[0]) == m],
                 [k for p, k in zip(judged, klass, strict=True) if mode_of(p[0]) == m])
             for m in ("blind", "verify")}
    figs = {m: mode_figures(ps, ks, labels, schema) for m, (ps, ks) in split.items()}
    acc = {m: Ratio(f.answer_accuracy.hits, f.answer_accuracy.n) for m, f in figs.items()}
    return ReviewModes(blind=figs["blind"], verify=figs["verify"],
                       verify_minus_blind=newcombe(acc["verify"], acc["blind"]))


def human_agreement(pairs: Iterable[tuple[Adjudication, Adjudication]],
                    schema: AnswerSchema | None, labels: Sequence[str]
                    ) -> HumanAgreement | None:
    """First vs second reviewer on double-reviewed cells (two different reviewers)."""
    both = [(a, b) for a, b in pairs if a.adjudicator != b.adjudicator]
    if not both:
        return None
    answers = [(answer_label(a.final_answer, schema), answer_label(b.final_answer, schema))
               for a, b in both]
    klass = [(a.classification, b.classification) for a, b in both]
    kappa, kci = kappa_with_ci(answers)
    ac1, aci = ac1_pairs(answers, answer_scale(schema))
    return HumanAgreement(
        n=len(both), percent=figure(agreement(answers)), kappa=kappa, kappa_ci95=kci,
        ac1=ac1, ac1_ci95=aci, classification_agreement=figure(agreement(klass)),
        classification_kappa=kappa_with_ci(klass)[0],
        classification_ac1=ac1_pairs(klass, labels)[0])


def agents_agreement(answers: Mapping[str, Mapping[str, str]], agents: Sequence[str]
                     ) -> tuple[int | None, int | None, float | None, tuple[PairAgreement, ...]]:
    """Agreement among any number of reviewer agents from each cell's answers by agent id
    (cell -> agent -> answer category): Fleiss' kappa over the cells every agent of
    ``agents`` answered (raters, cells, kappa), and each pair over the cells both answered."""
    ids = list(agents) or sorted({a for per in answers.values() for a in per})
    pairs = []
    for x, y in combinations(ids, 2):
        both = [(per[x], per[y]) for per in answers.values() if x in per and y in per]
        kappa, kci = kappa_with_ci(both)
        pairs.append(PairAgreement(agents=(x, y), agreement=figure(agreement(both)),
                                   kappa=kappa, kappa_ci95=kci))
    complete = [per for per in answers.values() if all(a in per for a in ids)]
    if len(ids) < 2 or not complete:
        return (len(ids) or None), 0 if ids else None, None, tuple(pairs)
    scale = sorted({per[a] for per in complete for a in ids})
    table = [[sum(per[a] == c for a in ids) for c in scale] for per in complete]
    return len(ids), len(complete), fleiss_kappa(table), tuple(pairs)


def agent_answers(outcomes: Mapping[str, CellOutcome], jobs: Mapping[str, JudgeJob],
                  task: str, field: str, schema: AnswerSchema | None
                  ) -> dict[str, dict[str, str]]:
    """Cell -> agent id -> answer category: the job's answers when the cell had a job,
    else the agents' shared answer of an agreement cell (every agent that answered)."""
    out: dict[str, dict[str, str]] = {}
    for cell, o in outcomes.items():
        if (o.task_id, o.field_id) != (task, field):
            continue
        job = jobs.get(cell)
        if job is not None:
            out[cell] = {a.agent_id: answer_label(v, schema)
                         for a, v in zip(job.answers, job.normalized, strict=True)}
        elif o.outcome in ("agreement", "type_drift"):
            out[cell] = {a: answer_label(o.agreed_answer, schema) for a in o.agents
                         if a not in o.missing_agents}
    return out
