"""validate.check: what code changes or flags in a model's evaluation, table by table."""

from __future__ import annotations

from typing import Any

import pytest

from agents.debrief import validate
from agents.debrief.autorubric import rubric_for
from agents.debrief.bands import band
from agents.errors import InvalidOutput
from schemas.medkit import TRAINING_NOTICE, CaseEvaluationInput, DebriefRequest
from tests.unit.agents.debrief.support import good_payload, sample


def _check(request: DebriefRequest, payload: dict[str, Any]) -> validate.Checked:
    rubric, source = rubric_for(request)
    return validate.check(request, rubric, source, CaseEvaluationInput.model_validate(payload))


def _criterion(payload: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in payload["criteria"] if c["criterion_id"] == cid)


def test_a_good_evaluation_passes_unchanged() -> None:
    req = sample("req-cp-001")
    payload = good_payload(req)
    out = _check(req, payload)
    added = {"claimed_global_rating", "claimed_domain_scores", "score_flags",
             "unquoted_criteria", "training_notice"}
    assert out.payload.model_dump(mode="json", exclude=added) == payload
    assert (out.dropped, out.corrections, out.unverified_quotes, out.problems) == ([], [], [], [])
    dumped = out.payload.model_dump(mode="json")
    assert dumped["claimed_global_rating"] == payload["global_rating"]
    assert dumped["training_notice"] == TRAINING_NOTICE


@pytest.mark.parametrize(("cid", "ref", "reason"), [
    ("cp-cm-ecg", "ESC-STEMI-INVENTED", "unknown_citation"),   # invented recId
    ("cp-cm-aspirin", None, "missing_citation"),               # CM criterion citing nothing
    ("cp-dg-onset", "NICE-CG95", "unknown_citation"),          # any domain, unknown recId
])
def test_criteria_citing_outside_the_registry_slice_are_dropped(
        cid: str, ref: str | None, reason: str) -> None:
    req = sample("req-cp-001")
    payload = good_payload(req)
    _criterion(payload, cid)["guideline_ref"] = ref
    out = _check(req, payload)
    assert [(d.criterion_id, d.reason) for d in out.dropped] == [(cid, reason)]
    assert cid not in {c.criterion_id for c in out.payload.criteria}
    assert "criteria_dropped" in {p.type for p in out.problems}


def test_criteria_not_in_the_rubric_are_dropped_and_unscored_ones_reported() -> None:
    req = sample("req-cp-001")
    payload = good_payload(req)
    payload["criteria"][0]["criterion_id"] = "cp-dg-made-up"
    out = _check(req, payload)
    assert [(d.criterion_id, d.reason) for d in out.dropped] == [
        ("cp-dg-made-up", "unknown_criterion")]
    missing = [p for p in out.problems if p.type == "criteria_not_evaluated"]
    assert missing and "cp-dg-onset" in missing[0].message


def test_rubric_citing_a_missing_recid_is_reported_and_its_criterion_dropped() -> None:
    req = sample("req-cp-003")
    out = _check(req, good_payload(req))
    assert out.rubric_unknown_refs == ["ESC-STEMI-STATIN"]
    assert [(d.criterion_id, d.guideline_ref) for d in out.dropped] == [
        ("cp-cm-statin", "ESC-STEMI-STATIN")]
    assert "rubric_unknown_citation" in {p.type for p in out.problems}


def test_auto_rubric_criteria_may_cite_nothing() -> None:
    req = sample("req-ank-001")
    out = _check(req, good_payload(req))
    assert out.dropped == []
    assert all(c.guideline_ref is None for c in out.payload.criteria)


def test_wrong_verdict_bands_are_recorded_and_bands_follow_the_recomputed_scores() -> None:
    req = sample("req-cp-001")
    payload = good_payload(req)
    payload["global_rating"] = {"score": 0.72, "verdict": "excellent"}
    payload["domain_scores"]["interpersonal"] = {"score": 0.39, "verdict": "borderline"}
    payload["domain_scores"]["data_gathering"] = {"score": 0.85, "verdict": "excellent"}
    out = _check(req, payload)
    # the model's verdicts disagreed with its own claimed scores: recorded
    assert [(c.scope, c.model_verdict, c.verdict) for c in out.corrections] == [
        ("interpersonal", "borderline", "clear-fail"), ("global", "excellent", "good")]
    # the published ratings are the recomputed ones (every criterion scored 1.0 here)
    assert out.payload.global_rating.model_dump() == {"score": 1.0, "verdict": "excellent"}
    assert out.payload.domain_scores.interpersonal.verdict == "excellent"
    assert out.payload.claimed_global_rating.score == 0.72  # type: ignore[attr-defined]
    assert [(f.scope, f.claimed) for f in out.payload.score_flags] == [  # type: ignore[attr-defined]
        ("data_gathering", 0.85), ("interpersonal", 0.39), ("global", 0.72)]


def test_a_code_detected_breach_is_added_and_the_narrative_leads_with_it() -> None:
    req = sample("req-sep-002")
    payload = good_payload(req)
    payload["safety_breach"] = None
    payload["narrative"] = "Excellent sepsis bundle, well done."
    payload["global_rating"] = {"score": 0.95, "verdict": "excellent"}
    out = _check(req, payload)
    assert out.payload.safety_breach is not None
    assert out.payload.safety_breach.kind == "contraindicated_drug"
    assert out.payload.narrative.startswith("Safety breach: piperacillin")
    assert out.payload.narrative.endswith("Excellent sepsis bundle, well done.")
    # the score is not the point: the published rating is the recomputed one, untouched
    assert out.payload.global_rating.verdict == band(out.payload.global_rating.score)
    assert {"safety_breach_added", "narrative_safety_lead"} <= {p.type for p in out.problems}


def test_a_narrative_already_leading_with_the_breach_is_kept() -> None:
    req = sample("req-pf-003")
    payload = good_payload(req)
    payload["narrative"] = "Safety breach: you prescribed aspirin to an infant. Rest fine."
    out = _check(req, payload)
    assert out.payload.narrative == payload["narrative"]


def test_a_model_reported_breach_is_kept_even_when_code_finds_none() -> None:
    req = sample("req-cp-001")
    payload = good_payload(req)
    payload["safety_breach"] = {"kind": "other", "description": "no allergy check before "
                                "aspirin", "evidence": None}
    out = _check(req, payload)
    assert out.payload.safety_breach is not None and out.payload.safety_breach.kind == "other"
    assert out.payload.narrative.startswith("Safety breach: no allergy check")


def test_quotes_not_in_the_encounter_log_are_flagged_not_published_as_verified() -> None:
    req = sample("req-cp-001")
    payload = good_payload(req)
    _criterion(payload, "cp-ip-ice")["quotes"] = [
        "My dad died of a heart attack at fifty-two.", "I am terrified of dying"]
    out = _check(req, payload)
    assert [(q.criterion_id, q.quote) for q in out.unverified_quotes] == [
        ("cp-ip-ice", "I am terrified of dying")]
    assert "unverified_quote" in {p.type for p in out.problems}


def test_an_evaluation_of_another_case_is_invalid() -> None:
    req = sample("req-cp-001")
    payload = good_payload(req) | {"case_id": "adult-sepsis-uti\nzqphimark"}
    with pytest.raises(InvalidOutput, match="case_id") as exc:
        _check(req, payload)
    # the message is a published dead-letter header: neither id nor the model's text
    assert "zqphimark" not in str(exc.value) and "adult-sepsis" not in str(exc.value)
    assert req.case_id not in str(exc.value)
