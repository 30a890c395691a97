"""Safety checks over the structured encounter log (code, not the model, decides).

* a prescribed or administered drug that the case lists as contraindicated;
* a red-flag finding of the case without any of its escalation actions taken;
* a high-risk diagnosis with no safety-netting advice given.
"""

from __future__ import annotations

from agents.debrief.transcript import find_line, section_lines
from schemas.medkit import DebriefRequest, SafetyBreach

#: Order in which a narrative should lead with breaches (most immediate harm first).
PRIORITY = ("contraindicated_drug", "missed_red_flag", "no_safety_netting", "other")


def find_breaches(request: DebriefRequest) -> list[SafetyBreach]:
    summary, log = request.case_summary, request.encounter_log
    sections = section_lines(log)
    given = sections["prescriptions"] + sections["treatments"]
    found: list[SafetyBreach] = []
    for ci in summary.contraindications:
        line = find_line(given, [ci.drug])
        if line is not None:
            found.append(SafetyBreach(
                kind="contraindicated_drug",
                description=f"{ci.drug} was given although it is contraindicated ({ci.reason})",
                evidence=line))
    actions = sections["escalations"] + sections["treatments"] + sections["tests"]
    for flag in summary.red_flags:
        if find_line(actions, flag.escalation_any_of) is None:
            found.append(SafetyBreach(
                kind="missed_red_flag",
                description=f"red flag not escalated: {flag.finding}",
                evidence=None))
    if summary.is_high_risk and not log.safety_netting:
        found.append(SafetyBreach(
            kind="no_safety_netting",
            description=(f"no safety-netting advice was given for a high-risk diagnosis "
                         f"({summary.correct_diagnosis})"),
            evidence=None))
    return sorted(found, key=lambda b: PRIORITY.index(b.kind))


def lead_sentence(breach: SafetyBreach) -> str:
    """The sentence every narrative with a breach starts with."""
    return f"Safety breach: {breach.description}."


def leads_with_breach(narrative: str) -> bool:
    """Whether the narrative's first words announce a safety breach."""
    return narrative.lstrip(" \t\n*#>-").lower().startswith("safety breach")
