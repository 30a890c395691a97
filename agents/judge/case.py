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
from schemas.chart_review import JudgeJob
from schemas.skill import Criterion

#: Marks a gate answer that was not given to the prompt.
UNKNOWN: Any = object()
LABELS = "ABCDEFGHIJ"


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
        known = ("not known to the judge" if gate_answer is UNKNOWN
                 else json.dumps(gate_answer))
        lines.append(f"Gate criterion {criterion.gate.field_id}: the patient's answer is "
                     f"{known}")
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
