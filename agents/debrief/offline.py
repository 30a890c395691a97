"""The offline grader: a deterministic checklist over the structured encounter log.

No network: used by ``judgeflow demo`` and when ``llm.provider`` is ``offline`` (degraded
mode). Each criterion is met (score 1) when its checklist hint matches the log, else 0; a
criterion without a hint cannot be judged from structure and scores 0.5. Its output goes
through the same validation as a model's.
"""

from __future__ import annotations

from agents.debrief.bands import band
from agents.debrief.safety import find_breaches, lead_sentence
from agents.debrief.transcript import find_line, section_lines
from schemas.medkit import (
    CaseEvaluationInput,
    CaseRubric,
    CriterionEvaluation,
    DebriefRequest,
    Domain,
    RubricCriterion,
)

MODEL = "checklist-v1"
UNJUDGED = 0.5


def _judge(c: RubricCriterion, domain: Domain, request: DebriefRequest
           ) -> CriterionEvaluation:
    log = request.encounter_log
    hint = c.checklist
    quotes: tuple[str, ...] = ()
    score, evidence = UNJUDGED, "no checklist hint: not judged offline"
    if hint is not None:
        lines = section_lines(log)[hint.section]
        line = find_line(lines, hint.any_of) if hint.any_of else (lines[0] if lines else None)
        if hint.section == "diagnosis" and not log.diagnosis_correct:
            line = None
        if line is not None:
            score, quotes = 1.0, (line,)
            evidence = f"met: the {hint.section.replace('_', ' ')} record shows it"
        else:
            score, evidence = 0.0, f"not found in the {hint.section.replace('_', ' ')} record"
    return CriterionEvaluation(criterion_id=c.id, domain=domain, score=score,
                               evidence=evidence, quotes=quotes, guideline_ref=c.guideline_ref)


def _mean(pairs: list[tuple[float, float]]) -> float:
    total = sum(w for _, w in pairs)
    return round(sum(s * w for s, w in pairs) / total, 4) if total else 0.0


def grade(request: DebriefRequest, rubric: CaseRubric) -> CaseEvaluationInput:
    allowed = request.registry_slice.rec_ids
    criteria: list[CriterionEvaluation] = []
    ratings: dict[str, dict[str, object] | None] = {}
    weighted: list[tuple[float, float]] = []
    for domain, items in rubric.by_domain().items():
        pairs = []
        for c in items:
            ev = _judge(c, domain, request)
            criteria.append(ev)
            if c.guideline_ref is None or c.guideline_ref in allowed:  # will not be dropped
                pairs.append((ev.score, c.weight))
        weighted.extend(pairs)
        score = _mean(pairs)
        ratings[domain] = {"score": score, "verdict": band(score)} if pairs else None
    for required in ("data_gathering", "clinical_management", "interpersonal"):
        ratings[required] = ratings[required] or {"score": 0.0, "verdict": band(0.0)}
    overall = _mean(weighted)
    met = [c for c in criteria if c.score >= 1.0]
    unmet = [c for c in criteria if c.score <= 0.0]
    text = {c.id: c.text for items in rubric.by_domain().values() for c in items}
    breaches = find_breaches(request)
    narrative = (f"Training debrief (checklist grader): {len(met)} of {len(criteria)} "
                 f"criteria met, overall {band(overall)}. "
                 + ("The submitted diagnosis was correct." if request.encounter_log
                    .diagnosis_correct else "The submitted diagnosis was not correct."))
    if breaches:
        narrative = f"{lead_sentence(breaches[0])} {narrative}"
    return CaseEvaluationInput.model_validate({
        "case_id": request.case_id,
        "global_rating": {"score": overall, "verdict": band(overall)},
        "domain_scores": ratings,
        "criteria": [c.model_dump() for c in criteria],
        "highlights": [text[c.criterion_id] for c in met[:3]],
        "improvements": [text[c.criterion_id] for c in unmet[:3]],
        "narrative": narrative,
        "safety_breach": breaches[0].model_dump() if breaches else None,
    })
