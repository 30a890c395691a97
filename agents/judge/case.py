"""The judge's case message: everything about one cell, untrusted text framed as data.

Every agent's answer (agent A, B, C ... in expected-agents order), the gate criterion's
answer when known, the note excerpts and the id and size of every other note of the
patient. Note text, answers, rationales and quotes sit inside :mod:`agents.framing` blocks
with a per-request boundary drawn after the texts are known. Pure apart from that draw.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agents.context.assemble import CaseContext
from agents.framing import announce, block, new_boundary
from agents.judge.gates import ADJUDICATED, PENDING, GateAnswer
from schemas.chart_review import JudgeJob
from schemas.skill import Criterion

#: Marks a gate answer that was not looked up (a Judge built without a gate store; the
#: worker and replays always pass one, see agents.judge.gates_feed.following).
UNKNOWN: Any = object()
LABELS = "ABCDEFGHIJ"


_UNDECIDED = {"disagreement": "the agents disagree on it",
              "low_confidence": "an agent marked its answer low confidence",
              "agent_missing": "an expected agent did not answer and the others differ"}


def gate_text(gate_answer: Any) -> str:
    """The gate answer as the case states it: a value, a :class:`GateAnswer` or
    :data:`UNKNOWN` (not looked up)."""
    if gate_answer is UNKNOWN:
        return "not known to the judge"
    if not isinstance(gate_answer, GateAnswer):
        return json.dumps(gate_answer)
    if gate_answer.outcome == PENDING:
        return "not known to the judge (its cell has not been decided yet)"
    if not gate_answer.decided:
        why = _UNDECIDED.get(gate_answer.outcome, f"its cell was decided as "
                                                  f"{gate_answer.outcome}")
        return f"not known to the judge ({why})"
    how = {"agent_missing": "one agent answered",
           ADJUDICATED: "a reviewer adjudicated it"}.get(gate_answer.outcome,
                                                         "the agents agreed")
    met = {True: "; the gate is met", None: "",
           False: "; the gate is NOT met, so this criterion may not apply to the patient"}
    return f"{json.dumps(gate_answer.answer)} ({how}){met[gate_answer.met]}"


def _agent_text(job: JudgeJob, index: int) -> str:
    a = job.answers[index]
    norm = job.normalized[index] if index < len(job.normalized) else None
    lines = [f"answer: {json.dumps(a.answer)}  (canonical: {json.dumps(norm)})",
             f"confidence: {a.confidence}"]
    if a.low_confidence_reason:
        lines.append(f"why low confidence: {a.low_confidence_reason}")
    lines.append(f"rationale: {a.rationale or '(none)'}")
    for ev in a.evidence:
        where = f" offsets {list(ev.offsets)}" if ev.offsets else ""
        lines.append(f"- cites note {ev.note_id}{where}: \"{ev.quote}\"")
    return "\n".join(lines)


def _untrusted(job: JudgeJob, context: CaseContext) -> list[str]:
    return [*(_agent_text(job, i) for i in range(len(job.answers))),
            *(e.text for e in context.excerpts), json.dumps(job.reasons)]


def case_text(job: JudgeJob, context: CaseContext, criterion: Criterion | None = None, *,
              notes: Mapping[str, str] | None = None, gate_answer: Any = UNKNOWN,
              boundary: str | None = None) -> str:
    b = boundary or new_boundary(_untrusted(job, context))
    lines = [announce(b), "",
             f"Cell: task {job.task_id}, patient {job.patient_id}, criterion {job.field_id}",
             f"Kind: {job.kind}", block(b, "why flagged", "; ".join(job.reasons) or "-")]
    if criterion is not None and criterion.gate is not None:
        lines.append(f"Gate criterion {criterion.gate.field_id}: the patient's answer is "
                     f"{gate_text(gate_answer)}")
    if job.missing_agents:
        lines.append(f"Expected agents that did not answer: {', '.join(job.missing_agents)}")
    lines.append("")
    for i, a in enumerate(job.answers):
        label = f"Agent {LABELS[i] if i < len(LABELS) else i + 1}"
        lines += [f"## {label} (agent_id {a.agent_id})",
                  block(b, f"{label} answer", _agent_text(job, i)), ""]
    if context.missing_cited:
        lines.append(f"Cited notes that do not exist: {', '.join(context.missing_cited)}")
    lines.append("# Notes")
    for ex in context.excerpts:
        origin = "cited by an agent" if ex.cited else "not cited; matches keywords"
        lines.append(block(b, f"note {ex.note_id} ({origin}); characters {ex.start}-{ex.end} "
                              f"of {ex.note_length}", ex.text))
    if context.left_out:
        lines.append(f"(left out for length: {', '.join(context.left_out)})")
    if notes is not None:
        shown = {e.note_id for e in context.excerpts}
        others = [f"{n} ({len(t)} characters)" for n, t in sorted(notes.items())
                  if n not in shown]
        lines.append("Other notes of this patient, not shown: " + (", ".join(others) or "none"))
    return "\n".join(lines)
