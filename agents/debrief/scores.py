"""Domain and global scores recomputed in code from the criteria that survived validation.

A domain score is the weighted mean (rubric weights) of its kept criteria; the global score
the weighted mean of every kept criterion. Verdicts are the bands of the recomputed scores.
A domain with no kept criterion keeps the model's rating (there is nothing to recompute it
from) and is flagged. The model's claimed ratings are returned beside the recomputed ones,
and a difference larger than :data:`TOLERANCE` becomes a :class:`ScoreFlag`. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.debrief.bands import band
from schemas.medkit import (
    DOMAINS,
    CaseEvaluationInput,
    CaseRubric,
    CriterionEvaluation,
    DomainScores,
    Rating,
    ScoreFlag,
)

#: A claimed score further than this from the recomputed one is flagged.
TOLERANCE = 0.10


@dataclass(frozen=True)
class Recomputed:
    global_rating: Rating
    domain_scores: DomainScores
    flags: tuple[ScoreFlag, ...]
    #: Scopes kept as the model claimed them (no kept criterion to recompute from).
    unscored: tuple[str, ...]


def weighted(criteria: Sequence[CriterionEvaluation], weights: dict[str, float]
             ) -> float | None:
    total = sum(weights.get(c.criterion_id, 1.0) for c in criteria)
    if not criteria or total <= 0:
        return None
    mean = sum(weights.get(c.criterion_id, 1.0) * c.score for c in criteria) / total
    return round(min(1.0, max(0.0, mean)), 4)


def _rating(scope: str, claimed: Rating | None, score: float | None,
            flags: list[ScoreFlag], unscored: list[str]) -> Rating | None:
    if score is None:
        if claimed is not None:
            unscored.append(scope)
        return claimed
    if claimed is not None and abs(claimed.score - score) > TOLERANCE + 1e-9:
        flags.append(ScoreFlag(scope=scope, claimed=claimed.score, recomputed=score))
    return Rating(score=score, verdict=band(score))


def recompute(payload: CaseEvaluationInput, kept: Sequence[CriterionEvaluation],
              rubric: CaseRubric) -> Recomputed:
    weights = {c.id: c.weight for crit in rubric.by_domain().values() for c in crit}
    flags: list[ScoreFlag] = []
    unscored: list[str] = []
    domains: dict[str, Rating | None] = {}
    for name in DOMAINS:
        in_domain = [c for c in kept if c.domain == name]
        domains[name] = _rating(name, getattr(payload.domain_scores, name),
                                weighted(in_domain, weights), flags, unscored)
    rating = _rating("global", payload.global_rating, weighted(kept, weights), flags,
                     unscored)
    assert rating is not None  # the claimed global rating is required
    return Recomputed(rating, DomainScores.model_validate(
        {k: v.model_dump() if v else None for k, v in domains.items()}), tuple(flags),
        tuple(unscored))
