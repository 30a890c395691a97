"""Validation of a model's evaluation in code (pure): citation allowlist, rubric coverage,
verdict bands, scores recomputed from the kept criteria (:mod:`agents.debrief.scores`),
transcript quotes (a criterion with no quote found in the encounter log is flagged: its
evidence is not specific), the safety override and the fixed training-only notice.

:func:`check` returns the corrected payload plus what was changed or flagged; it raises
:class:`agents.errors.InvalidOutput` only for an evaluation that cannot be repaired (wrong
case), which the grader answers with a repair round-trip.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agents.debrief.bands import band
from agents.debrief.safety import find_breaches, lead_sentence, leads_with_breach
from agents.debrief.scores import recompute
from agents.debrief.transcript import quote_in_log
from agents.errors import InvalidOutput
from schemas.chart_review import ValidationProblem
from schemas.medkit import (
    DOMAINS,
    TRAINING_NOTICE,
    CaseEvaluationInput,
    CaseRubric,
    CheckedEvaluation,
    CriterionEvaluation,
    DebriefRequest,
    DomainScores,
    DroppedCriterion,
    QuoteFlag,
    Rating,
    SafetyBreach,
    VerdictCorrection,
)

DropReason = Literal["unknown_citation", "missing_citation", "unknown_criterion"]


@dataclass
class Checked:
    #: A :class:`CheckedEvaluation` once :func:`check` has run.
    payload: CaseEvaluationInput
    dropped: list[DroppedCriterion] = field(default_factory=list)
    corrections: list[VerdictCorrection] = field(default_factory=list)
    rubric_unknown_refs: list[str] = field(default_factory=list)
    unverified_quotes: list[QuoteFlag] = field(default_factory=list)
    safety_findings: list[SafetyBreach] = field(default_factory=list)
    problems: list[ValidationProblem] = field(default_factory=list)


def rubric_unknown_refs(rubric: CaseRubric, allowed: frozenset[str]) -> list[str]:
    """recIds the rubric itself cites that the registry slice does not contain."""
    refs = [c.guideline_ref for crit in rubric.by_domain().values() for c in crit
            if c.guideline_ref and c.guideline_ref not in allowed]
    return sorted(set(refs))


def filter_criteria(criteria: tuple[CriterionEvaluation, ...], rubric: CaseRubric,
                    allowed: frozenset[str], authored: bool, out: Checked
                    ) -> list[CriterionEvaluation]:
    """Drop criteria that cite outside the allowlist (or, for an authored rubric, a
    clinical-management criterion that cites nothing) and criteria not in the rubric."""
    domain_of = {c.id: d for d, crit in rubric.by_domain().items() for c in crit}
    kept: list[CriterionEvaluation] = []
    for c in criteria:
        reason: DropReason | None = None
        if c.criterion_id not in domain_of:
            reason = "unknown_criterion"
        elif c.guideline_ref is not None and c.guideline_ref not in allowed:
            reason = "unknown_citation"
        elif (c.guideline_ref is None and authored
              and domain_of[c.criterion_id] == "clinical_management"):
            reason = "missing_citation"
        if reason is not None:
            out.dropped.append(DroppedCriterion(criterion_id=c.criterion_id, domain=c.domain,
                                                guideline_ref=c.guideline_ref,
                                                reason=reason))
            continue
        if c.domain != domain_of[c.criterion_id]:
            out.problems.append(ValidationProblem(
                type="domain_corrected", action="repaired",
                message=f"{c.criterion_id}: domain {c.domain} -> {domain_of[c.criterion_id]}"))
            c = c.model_copy(update={"domain": domain_of[c.criterion_id]})
        kept.append(c)
    if out.dropped:
        out.problems.append(ValidationProblem(
            type="criteria_dropped", action="dropped",
            message=", ".join(f"{d.criterion_id} ({d.reason})" for d in out.dropped)))
    seen = {c.criterion_id for c in kept} | {d.criterion_id for d in out.dropped}
    missing = [cid for cid in domain_of if cid not in seen]
    if missing:
        out.problems.append(ValidationProblem(
            type="criteria_not_evaluated", message=", ".join(missing)))
    return kept


def _rebanded(scope: str, rating: Rating, out: Checked) -> Rating:
    verdict = band(rating.score)
    if verdict == rating.verdict:
        return rating
    out.corrections.append(VerdictCorrection(scope=scope, score=rating.score,
                                             model_verdict=rating.verdict, verdict=verdict))
    return Rating(score=rating.score, verdict=verdict)


def correct_verdicts(payload: CaseEvaluationInput, out: Checked) -> dict[str, object]:
    scores = payload.domain_scores
    domains: dict[str, Rating | None] = {}
    for name in DOMAINS:
        rating = getattr(scores, name)
        domains[name] = None if rating is None else _rebanded(name, rating, out)
    update: dict[str, object] = {
        "global_rating": _rebanded("global", payload.global_rating, out),
        "domain_scores": DomainScores.model_validate(
            {k: v.model_dump() if v else None for k, v in domains.items()}),
    }
    if out.corrections:
        out.problems.append(ValidationProblem(
            type="verdict_corrected", action="repaired",
            message=", ".join(f"{c.scope}: {c.model_verdict} -> {c.verdict}"
                              for c in out.corrections)))
    return update


def check(request: DebriefRequest, rubric: CaseRubric, rubric_source: str,
          payload: CaseEvaluationInput) -> Checked:
    if payload.case_id != request.case_id:
        # the message becomes a published dead-letter header: name the mismatch, never the
        # model's text (any characters) nor the request's id
        raise InvalidOutput(["the evaluation's case_id is not the case of this request"])
    out = Checked(payload=payload)
    allowed = request.registry_slice.rec_ids
    out.rubric_unknown_refs = rubric_unknown_refs(rubric, allowed)
    if out.rubric_unknown_refs:
        out.problems.append(ValidationProblem(
            type="rubric_unknown_citation",
            message="rubric cites recIds missing from the registry slice: "
                    + ", ".join(out.rubric_unknown_refs)))
    kept = filter_criteria(payload.criteria, rubric, allowed, rubric_source == "authored", out)
    correct_verdicts(payload, out)  # the model's verdicts against its own claimed scores
    scores = recompute(payload, kept, rubric)
    update: dict[str, object] = {
        "criteria": tuple(kept), "global_rating": scores.global_rating,
        "domain_scores": scores.domain_scores, "score_flags": scores.flags,
        "claimed_global_rating": payload.global_rating,
        "claimed_domain_scores": payload.domain_scores, "training_notice": TRAINING_NOTICE}
    if scores.flags:
        out.problems.append(ValidationProblem(
            type="score_mismatch", message="claimed vs recomputed: " + ", ".join(
                f"{f.scope} {f.claimed:.2f} -> {f.recomputed:.2f}" for f in scores.flags)))
    if scores.unscored:
        out.problems.append(ValidationProblem(
            type="score_not_recomputed", message="no kept criterion; the model's rating "
            "is kept for: " + ", ".join(scores.unscored)))
    log = request.encounter_log
    out.unverified_quotes = [QuoteFlag(criterion_id=c.criterion_id, quote=q)
                             for c in kept for q in c.quotes if not quote_in_log(q, log)]
    if out.unverified_quotes:
        out.problems.append(ValidationProblem(
            type="unverified_quote",
            message=f"{len(out.unverified_quotes)} quote(s) not found in the encounter log"))
    unquoted = tuple(c.criterion_id for c in kept
                     if not any(quote_in_log(q, log) for q in c.quotes))
    update["unquoted_criteria"] = unquoted
    if unquoted:
        out.problems.append(ValidationProblem(
            type="unspecific_evidence", message="no transcript quote found in the encounter "
            "log for: " + ", ".join(unquoted)))
    out.safety_findings = find_breaches(request)
    breach = payload.safety_breach
    if breach is None and out.safety_findings:
        breach = out.safety_findings[0]
        update["safety_breach"] = breach
        out.problems.append(ValidationProblem(type="safety_breach_added", action="repaired",
                                              message=breach.kind))
    if breach is not None and not leads_with_breach(payload.narrative):
        update["narrative"] = f"{lead_sentence(breach)} {payload.narrative.strip()}"
        out.problems.append(ValidationProblem(type="narrative_safety_lead", action="repaired",
                                              message="narrative now leads with the breach"))
    out.payload = CheckedEvaluation.model_validate(
        {**payload.model_dump(), **{k: v for k, v in update.items()}})
    return out
