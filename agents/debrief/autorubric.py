"""The generic auto-rubric for cases without an authored rubric (``rubric_source: "auto"``).

Standard criteria for each domain, no guideline citations. Checklist hints let the offline
grader score them from the structured encounter log.
"""

from __future__ import annotations

from schemas.medkit import CaseRubric, ChecklistHint, DebriefRequest, RubricCriterion


def _c(cid: str, text: str, section: str, *phrases: str) -> RubricCriterion:
    return RubricCriterion(id=cid, text=text,
                           checklist=ChecklistHint.model_validate(
                               {"section": section, "any_of": phrases}))


AUTO_RUBRIC = CaseRubric(
    data_gathering=(
        _c("auto-dg-onset", "Establishes onset, duration and course of the presenting "
           "complaint", "history", "when did", "how long", "started", "onset"),
        _c("auto-dg-red-flags", "Screens for red-flag symptoms of the presenting complaint",
           "history", "any ", "have you had", "do you have"),
        _c("auto-dg-background", "Takes past medical, medication and allergy history",
           "history", "allerg", "medication", "medical history", "take any"),
        _c("auto-dg-tests", "Orders investigations that address the differential", "tests"),
    ),
    clinical_management=(
        _c("auto-cm-diagnosis", "Reaches the correct working diagnosis", "diagnosis"),
        _c("auto-cm-treatment", "Starts treatment appropriate to the working diagnosis",
           "treatments"),
        _c("auto-cm-escalation", "Escalates or refers when severity requires it",
           "escalations"),
    ),
    interpersonal=(
        _c("auto-ip-ice", "Explores the patient's ideas, concerns and expectations",
           "history", "worried", "concern", "expect", "think is going on"),
        _c("auto-ip-explains", "Explains the diagnosis and plan in plain language",
           "safety_netting", "explain", "means", "plan"),
    ),
    safety_netting=(
        _c("auto-sn-return", "Gives specific return precautions and follow-up",
           "safety_netting", "come back", "return", "call", "if ", "follow"),
    ),
)


def rubric_for(request: DebriefRequest) -> tuple[CaseRubric, str]:
    """The rubric to grade against and its source (``"authored"`` or ``"auto"``)."""
    if request.rubric is None or request.rubric.is_empty:
        return AUTO_RUBRIC, "auto"
    return request.rubric, "authored"
