"""Type-drift cells are decided in code, never by an LLM. Pure functions.

Type drift means the agents agree on the meaning and differ only in spelling (``true`` vs
``"yes"``). The platform's rules fix the answer: the canonical form from the criterion's
``answer_schema`` (the boolean for a ``[true, false, "no_info"]`` enum, the string for a
``["yes", "no", "no_info"]`` enum, ...), ``agent_correctness: both``,
``classification_hint: n_a``, and reasoning that says it is a format issue and names who
used the canonical spelling and who deviated. Confidence is high when every answer maps to
the same schema value; if they do not (the detector and the schema disagree) the analysis
says so with low confidence instead of guessing.
"""

from __future__ import annotations

import json

from schemas.chart_review import JudgeAnalysis, JudgeJob
from schemas.skill import Criterion
from streams.detect.normalize import Invalid, canonicalize, format_signature, to_json_value

LABELS = ("agent_a", "agent_b")


def _spelling(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def type_drift_analysis(job: JudgeJob, criterion: Criterion) -> JudgeAnalysis:
    schema = criterion.answer_schema
    canon = [canonicalize(a.answer, schema) for a in job.answers]
    values = [to_json_value(c) for c in canon]
    usable = canon and not any(isinstance(c, Invalid) for c in canon)
    if not usable or any(format_signature(v) != format_signature(values[0]) for v in values):
        return JudgeAnalysis(
            suggested_answer=None,
            reasoning=("Flagged as format drift, but the answers do not map to one value of "
                       f"the {criterion.field_id} answer_schema, so no canonical form can be "
                       "chosen; the reviewer should compare the answers directly."),
            agent_correctness="n_a", classification_hint="n_a", judge_confidence="low")
    target = values[0]
    canonical = [i for i, a in enumerate(job.answers)
                 if format_signature(a.answer) == format_signature(target)]
    deviated = [i for i in range(len(job.answers)) if i not in canonical]

    def who(indexes: list[int]) -> str:
        return " and ".join(f"{LABELS[i] if i < 2 else 'agent'} ({job.answers[i].agent_id}, "
                            f"{_spelling(job.answers[i].answer)})" for i in indexes)

    allowed = (f"answer_schema type {schema.type}"
               + (f" with enum {_spelling(list(schema.enum))}" if schema.enum else ""))
    first = (f"This is a format drift, not a clinical disagreement: both agents mean "
             f"{_spelling(target)}.")
    if canonical:
        second = (f"{who(canonical)} used the canonical form; {who(deviated)} deviated from "
                  "it.")
    else:
        second = f"Neither used the canonical form: {who(deviated)}."
    third = f"The canonical form per the {allowed} is {_spelling(target)}."
    return JudgeAnalysis(suggested_answer=target, reasoning=f"{first} {second} {third}",
                         evidence_pointers=(), agent_correctness="both",
                         classification_hint="n_a", judge_confidence="high")
