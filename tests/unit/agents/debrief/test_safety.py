from typing import Any

from agents.debrief.safety import find_breaches, leads_with_breach
from schemas.medkit import DebriefRequest
from tests.unit.agents.debrief.support import sample


def _with_log(request_id: str, **log: Any) -> DebriefRequest:
    base = sample(request_id)
    return base.model_copy(update={"encounter_log": base.encounter_log.model_copy(update=log)})


def test_complete_encounters_have_no_breach() -> None:
    for rid in ("req-cp-001", "req-sep-001", "req-pf-001", "req-ank-001"):
        assert find_breaches(sample(rid)) == [], rid


def test_contraindicated_prescription_is_a_breach_with_the_prescription_as_evidence() -> None:
    breaches = find_breaches(sample("req-sep-002"))
    assert [b.kind for b in breaches] == ["contraindicated_drug"]
    assert "piperacillin" in (breaches[0].evidence or "")
    assert "anaphylaxis" in breaches[0].description


def test_red_flag_without_any_escalation_action_is_a_breach() -> None:
    kinds = [b.kind for b in find_breaches(sample("req-cp-002"))]
    assert kinds == ["missed_red_flag", "no_safety_netting"]  # most immediate harm first


def test_red_flag_escalated_by_a_listed_action_is_not_a_breach() -> None:
    req = _with_log("req-cp-002", escalations=(), safety_netting=("call us if worse",))
    assert [b.kind for b in find_breaches(req)] == ["missed_red_flag"]
    escalated = req.encounter_log.model_copy(
        update={"escalations": sample("req-cp-001").encounter_log.escalations})
    assert find_breaches(req.model_copy(update={"encounter_log": escalated})) == []


def test_high_risk_case_without_safety_netting_is_a_breach_low_risk_is_not() -> None:
    assert [b.kind for b in find_breaches(sample("req-pf-002"))] == ["no_safety_netting"]
    assert find_breaches(_with_log("req-ank-001", safety_netting=())) == []


def test_narrative_lead_detection() -> None:
    assert leads_with_breach("Safety breach: aspirin given to an infant. Otherwise good.")
    assert leads_with_breach("**SAFETY BREACH** - aspirin")
    assert not leads_with_breach("Good history. Safety breach: aspirin.")
