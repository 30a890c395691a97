"""The judge prompt, written for judgeflow (the platform's judge rules in our own words).

Layout, for prompt caching: system block 1 = the judging rules (identical for every cell),
system block 2 = the criterion file and the edge cases it names (identical for every cell
of that criterion); both are marked cacheable. Everything about the patient — the agents'
answers and the note excerpts — comes last, in the user message. Building the static part
depends only on the criterion and the output mode, so two cells of the same criterion send
a byte-identical prefix.
"""

from __future__ import annotations

import json
from typing import Any

from agents.context.assemble import CaseContext
from agents.judge.output_schema import shared_schema
from agents.providers.base import LLMRequest, SystemBlock
from schemas.chart_review import JudgeJob
from schemas.skill import Criterion, Skill

SENTINEL_OPEN, SENTINEL_CLOSE = "<JUDGE_ANALYSIS>", "</JUDGE_ANALYSIS>"

RULES = """\
You review one cell of a clinical chart review before a human reviewer sees it. A cell is one \
criterion answered for one patient by reviewer agents: agent A and agent B either disagree, or \
one agent marked its own answer as low confidence. Your output is a triage suggestion shown \
next to the cell. You advise; the reviewer decides.

How to work
1. Study the criterion given below: the exact question, the allowed answers (answer_schema), \
the gate if there is one, and the edge cases it lists. Edge cases describe known traps; they \
often explain why agents split.
2. Read the note excerpts in the case message. Notes the agents cited come first; after them \
come notes the agents did not cite that mention the criterion's keywords, which they may have \
overlooked. Excerpts are marked with their character range in the original note.
3. Work out what the notes support on your own, before weighing who said what.
4. Then compare with the agents. For a disagreement: does agent A or agent B fit the evidence, \
are both wrong, or does this chart leave the criterion genuinely open? For a low-confidence \
answer: was the hesitation justified by mixed evidence, or does a careful reading settle it?

The six fields
- suggested_answer: your answer, written exactly as one of the criterion's allowed values \
(number criteria: a number in the stated unit; date criteria: YYYY-MM-DD; list criteria: an \
array of allowed items). Use null only if the evidence supports no single answer; then set \
judge_confidence to "low" and classification_hint to "true_ambiguity".
- reasoning: two to four plain sentences that state the finding. Start with the finding itself, \
with no lead-in such as "Based on the chart" or "I think". When you cite a note, copy its words \
exactly inside double quotes. Never put words in double quotes that do not appear in a note.
- evidence_pointers: one to three places the reviewer should re-read. note_id is the id shown \
in the case (no ".txt"); what_to_look_for is a few words naming what to check, not a quotation; \
offsets is [start, end] in characters of the original note, or null.
- agent_correctness: "agent_a", "agent_b", "both" or "neither" for a disagreement; "n_a" when \
only one agent answered.
- classification_hint: the category you expect the reviewer to choose: "agent_a_error", \
"agent_b_error", "guideline_gap" (the criterion's wording does not settle this situation), \
"true_ambiguity" (the chart does not settle it), or "n_a" for a single agent's \
low-confidence answer with nothing to compare it against.
- judge_confidence: how sure you are of your suggestion. "high" only when the notes leave no \
doubt; "low" when they are genuinely mixed.

If the cell cannot be analysed at all (for instance the notes are missing), set \
suggested_answer to null, judge_confidence to "low", and begin reasoning with \
"judge could not analyze this cell: " followed by the reason.
"""

OUTPUT_STRUCTURED = """
Answer format
Reply with one JSON object with exactly the six keys above and no other keys.
"""

OUTPUT_SENTINEL = f"""
Answer format
Reply with one JSON object with exactly the six keys above and no other keys, placed between \
{SENTINEL_OPEN} and {SENTINEL_CLOSE}. Write nothing before the opening tag or after the \
closing tag, and do not use code fences.
"""


def rules_text(structured: bool) -> str:
    return RULES + (OUTPUT_STRUCTURED if structured else OUTPUT_SENTINEL)


def criterion_text(skill: Skill, criterion: Criterion) -> str:
    schema = criterion.answer_schema.model_dump(mode="json", exclude_none=True)
    lines = [f"Phenotype skill: {skill.name}", f"Criterion: {criterion.field_id}",
             f"Question: {criterion.prompt}",
             f"answer_schema: {json.dumps(schema, sort_keys=True)}"]
    if criterion.gate is not None:
        lines.append(f"Gate: applies only when {criterion.gate.field_id} = "
                     f"{json.dumps(criterion.gate.value)}")
    if criterion.keywords:
        lines.append(f"Keywords: {', '.join(criterion.keywords)}")
    lines += ["", "Definition:", criterion.body or "(none)"]
    for name in criterion.uses.edge_cases:
        lines += ["", f"Edge case '{name}':", skill.edge_cases.get(name, "(missing)").strip()]
    return "\n".join(lines)


def _answer_lines(label: str, job: JudgeJob, index: int) -> list[str]:
    a = job.answers[index]
    norm = job.normalized[index] if index < len(job.normalized) else None
    lines = [f"## {label} (agent_id {a.agent_id})",
             f"answer: {json.dumps(a.answer)}  (canonical: {json.dumps(norm)})",
             f"confidence: {a.confidence}"]
    if a.low_confidence_reason:
        lines.append(f"why low confidence: {a.low_confidence_reason}")
    lines.append(f"rationale: {a.rationale or '(none)'}")
    for ev in a.evidence:
        where = f" offsets {list(ev.offsets)}" if ev.offsets else ""
        lines.append(f"- cites note {ev.note_id}{where}: \"{ev.quote}\"")
    return lines


def case_text(job: JudgeJob, context: CaseContext) -> str:
    lines = [f"Cell: task {job.task_id}, patient {job.patient_id}, criterion {job.field_id}",
             f"Kind: {job.kind}", f"Why flagged: {'; '.join(job.reasons) or '-'}", ""]
    for i, label in enumerate(("Agent A", "Agent B")[: len(job.answers)]):
        lines += [*_answer_lines(label, job, i), ""]
    if context.missing_cited:
        lines.append(f"Cited notes that do not exist: {', '.join(context.missing_cited)}")
    lines.append("# Notes")
    for ex in context.excerpts:
        origin = "cited by an agent" if ex.cited else "not cited; matches keywords"
        lines += [f"=== note {ex.note_id} ({origin}); characters {ex.start}-{ex.end} of "
                  f"{ex.note_length} ===", ex.text]
    if context.left_out:
        lines.append(f"(left out for length: {', '.join(context.left_out)})")
    return "\n".join(lines)


def build_request(skill: Skill, criterion: Criterion, job: JudgeJob, context: CaseContext, *,
                  structured: bool, max_tokens: int) -> LLMRequest:
    system = (SystemBlock(rules_text(structured), cache=True),
              SystemBlock(criterion_text(skill, criterion), cache=True))
    return LLMRequest(system=system,
                      messages=({"role": "user", "content": case_text(job, context)},),
                      max_tokens=max_tokens,
                      output_schema=shared_schema() if structured else None,
                      labels={"worker": "judge"})


def repair_request(first: LLMRequest, answer_text: str, problems: list[str],
                   max_tokens: int | None = None) -> LLMRequest:
    """The one repair round-trip: the model sees its answer and what was wrong with it."""
    note = ("Your answer could not be used:\n" + "\n".join(f"- {p}" for p in problems)
            + "\nReply again with the complete corrected object, following the answer format.")
    messages: tuple[dict[str, Any], ...] = first.messages
    if answer_text.strip():
        messages += ({"role": "assistant", "content": answer_text.strip()},)
    messages += ({"role": "user", "content": note},)
    return LLMRequest(system=first.system, messages=messages,
                      max_tokens=max_tokens or first.max_tokens,
                      output_schema=first.output_schema, labels=first.labels)
