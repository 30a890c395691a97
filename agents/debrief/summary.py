"""One-line summaries of published evaluations (for ``judgeflow demo`` and ``tail``)."""

from __future__ import annotations

from typing import Any

from schemas.medkit import CaseEvaluation


def summarize(evaluation: CaseEvaluation | dict[str, Any]) -> str:
    """``case_id  verdict (score)  safety breach: yes/no`` plus what code changed."""
    ev = (evaluation if isinstance(evaluation, CaseEvaluation)
          else CaseEvaluation.model_validate(evaluation))
    breach = f"yes ({ev.safety_breach.kind})" if ev.safety_breach else "no"
    extras = []
    if ev.rubric_source == "auto":
        extras.append("auto-rubric")
    if ev.dropped_criteria:
        extras.append(f"{len(ev.dropped_criteria)} criteria dropped")
    if ev.corrections:
        extras.append(f"{len(ev.corrections)} verdicts corrected")
    tail = f"  [{', '.join(extras)}]" if extras else ""
    return (f"{ev.case_id:<24} {ev.global_rating.verdict:<12} "
            f"({ev.global_rating.score:.2f})  safety breach: {breach}{tail}")
