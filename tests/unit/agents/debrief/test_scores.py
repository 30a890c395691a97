"""The attending's rules in code: scores recomputed from the kept criteria (rubric weights),
bands on the recomputed scores, claimed scores kept and large differences flagged, evidence
that quotes nothing from the encounter flagged, and the fixed training-only line."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agents.debrief import validate
from agents.debrief.autorubric import rubric_for
from agents.debrief.scores import TOLERANCE, weighted
from schemas.medkit import (
    TRAINING_NOTICE,
    CaseEvaluationInput,
    CheckedEvaluation,
    CriterionEvaluation,
)
from tests.unit.agents.debrief.support import good_payload, sample

# req-cp-001: data_gathering onset/character/risk (w 1); clinical_management ecg (w 2),
# aspirin (w 1), pci (w 2); interpersonal ice (w 1); safety_netting warn (w 1).


def check(scores: dict[str, float], *, refs: dict[str, str | None] | None = None,
          claimed: dict[str, float] | None = None,
          quotes: dict[str, list[str]] | None = None) -> validate.Checked:
    req = sample("req-cp-001")
    payload = good_payload(req)
    for c in payload["criteria"]:
        c["score"] = scores.get(c["criterion_id"], c["score"])
        if refs and c["criterion_id"] in refs:
            c["guideline_ref"] = refs[c["criterion_id"]]
        if quotes and c["criterion_id"] in quotes:
            c["quotes"] = quotes[c["criterion_id"]]
    for scope, value in (claimed or {}).items():
        target = payload if scope == "global" else payload["domain_scores"]
        key = "global_rating" if scope == "global" else scope
        target[key] = {"score": value, "verdict": "good"}
    rubric, source = rubric_for(req)
    return validate.check(req, rubric, source, CaseEvaluationInput.model_validate(payload))


def ratings(out: validate.Checked) -> dict[str, tuple[float, str]]:
    d = out.payload.domain_scores
    return {"global": (out.payload.global_rating.score, out.payload.global_rating.verdict),
            "clinical_management": (d.clinical_management.score,
                                    d.clinical_management.verdict),
            "data_gathering": (d.data_gathering.score, d.data_gathering.verdict)}


@pytest.mark.parametrize(("scores", "refs", "expected"), [
    # nothing dropped: weighted means (cm = (2*0.5 + 1*1 + 2*1) / 5 = 0.8)
    ({"cp-cm-ecg": 0.5}, None,
     {"clinical_management": (0.8, "good"), "global": (0.9, "excellent")}),  # 9 / 10
    # the invented citation drops ecg (weight 2): cm is recomputed from aspirin and pci only
    ({"cp-cm-ecg": 1.0, "cp-cm-aspirin": 0.2, "cp-cm-pci": 0.5},
     {"cp-cm-ecg": "ESC-STEMI-INVENTED"},
     {"clinical_management": (0.4, "borderline"), "global": (0.775, "good")}),  # 6.2 / 8
    # dropping a strong criterion pulls the domain and the global score down
    ({"cp-dg-onset": 1.0, "cp-dg-character": 0.0, "cp-dg-risk": 0.0},
     {"cp-dg-onset": "NICE-CG95"},
     {"data_gathering": (0.0, "clear-fail"), "global": (0.7778, "good")}),  # 7 / 9
])
def test_scores_are_recomputed_from_the_kept_criteria(
        scores: dict[str, float], refs: dict[str, str | None] | None,
        expected: dict[str, tuple[float, str]]) -> None:
    out = check(scores, refs=refs)
    got = ratings(out)
    for scope, value in expected.items():
        assert got[scope] == value, scope


@pytest.mark.parametrize(("claimed", "flagged"), [
    ({"global": 1.0}, []),                                  # matches the recomputation
    ({"global": 1.0 - TOLERANCE}, []),                      # within the tolerance
    ({"global": 0.6}, ["global"]),                          # claimed far from recomputed
    ({"global": 0.95, "clinical_management": 0.3}, ["clinical_management"]),
])
def test_claimed_scores_are_kept_and_large_differences_flagged(
        claimed: dict[str, float], flagged: list[str]) -> None:
    out = check({}, claimed=claimed)
    p: Any = out.payload
    assert [f.scope for f in p.score_flags] == flagged
    assert p.claimed_global_rating.score == claimed["global"]
    assert out.payload.global_rating.score == 1.0
    assert ("score_mismatch" in {x.type for x in out.problems}) is bool(flagged)


def test_a_domain_with_every_criterion_dropped_keeps_the_claim_and_is_flagged() -> None:
    out = check({}, refs={"cp-cm-ecg": "X1", "cp-cm-aspirin": "X2", "cp-cm-pci": None})
    assert out.payload.domain_scores.clinical_management.score == 1.0  # the claim
    assert "score_not_recomputed" in {p.type for p in out.problems}


@pytest.mark.parametrize(("quotes", "unquoted"), [
    ({}, ()),
    ({"cp-ip-ice": []}, ("cp-ip-ice",)),                         # "you missed ICE"
    ({"cp-ip-ice": ["The trainee did not explore concerns."]}, ("cp-ip-ice",)),  # paraphrase
    ({"cp-ip-ice": ["not in the log", "You look worried - what scares you most?"]}, ()),
])
def test_a_criterion_without_a_transcript_quote_is_flagged(
        quotes: dict[str, list[str]], unquoted: tuple[str, ...]) -> None:
    out = check({}, quotes=quotes)
    assert out.payload.unquoted_criteria == unquoted  # type: ignore[attr-defined]
    assert ("unspecific_evidence" in {p.type for p in out.problems}) is bool(unquoted)


def test_every_evaluation_carries_the_fixed_training_line() -> None:
    out = check({})
    assert out.payload.training_notice == TRAINING_NOTICE  # type: ignore[attr-defined]
    data = out.payload.model_dump()
    with pytest.raises(ValidationError):
        CheckedEvaluation.model_validate({**data, "training_notice": "Clinical advice."})


@pytest.mark.parametrize(("pairs", "expected"), [
    ([], None), ([(1.0, 0.5)], 0.5), ([(2.0, 1.0), (1.0, 0.4)], 0.8),
])
def test_weighted_mean(pairs: list[tuple[float, float]], expected: float | None) -> None:
    crits = [CriterionEvaluation(criterion_id=f"c{i}", domain="interpersonal", score=s,
                                 evidence="e") for i, (_, s) in enumerate(pairs)]
    assert weighted(crits, {f"c{i}": w for i, (w, _) in enumerate(pairs)}) == expected
