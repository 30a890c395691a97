"""The judge prompt, written for judgeflow (the platform's judge rules in our own words).

Layout, for prompt caching (a request carries at most 4 breakpoints; we use up to 2):

1. system block 1, shared by every cell of the skill: the judging rules, the data-framing rule,
   the answer format and the phenotype skill itself (SKILL.md, every criterion, every edge
   case);
2. system block 2, shared by every cell of one criterion: the criterion under review with its
   gate and edge cases;
3. the user message, different for every cell: every agent's answer, the gate answer when
   known, the note excerpts and the list of the patient's other notes.

A block is marked cacheable only when the prefix up to it clears the model's minimum
cacheable prefix (``min_cache_tokens``, estimated as ceil(chars / 3.5)); a breakpoint on a
shorter prefix would never cache. Untrusted text (notes, answers, rationales, quotes) is
framed by :mod:`agents.framing` with a per-request random boundary.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from agents.context.assemble import CaseContext
from agents.framing import DATA_RULE
from agents.judge.case import UNKNOWN, case_text
from agents.judge.output_schema import shared_schema
from agents.providers.base import LLMRequest, LLMResponse, SystemBlock
from schemas.chart_review import JudgeJob
from schemas.skill import Criterion, Skill

#: Minimum cacheable prefix of the default model (claude-sonnet-5-5), in tokens. Not found
#: on the official page at the time of writing: 2,048 is the conservative value (Sonnet 4.6
#: is 2,048, Sonnet 5 is reported at 1,024); a smaller real minimum only adds cache hits.
DEFAULT_MIN_CACHE_TOKENS = 2048
CHARS_PER_TOKEN = 3.5
MAX_BREAKPOINTS = 4

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
overlooked. Excerpts are marked with their character range in the original note. The case \
also lists every other note of the patient (id and size) so you know what exists; point the \
reviewer to one of those when the excerpts suggest the answer is there. If the criterion has \
a gate, check the patient's answer to the gate criterion first: the case gives it when the \
agents agreed on it, and says so when it is not known (then judge from the notes whether the \
gate holds).
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
exactly inside double quotes. Never put words in quote marks of any kind (double, single, \
curly, guillemets) that do not appear in a note: every quoted passage is checked against the \
notes.
- evidence_pointers: one to three places the reviewer should re-read. note_id is the id shown \
in the case (no ".txt"); what_to_look_for is a few words naming what to check, not a quotation; \
offsets is [start, end] in characters of the original note, or null.
- agent_correctness: "agent_a", "agent_b", "both" or "neither" for a disagreement (never \
"n_a" there); "n_a" for a low-confidence cell. When more than two agents answered, agent_a and \
agent_b are the first two listed; weigh the others as further opinions.
- classification_hint: the category you expect the reviewer to choose: "agent_a_error", \
"agent_b_error", "guideline_gap" (the criterion's wording does not settle this situation), \
"true_ambiguity" (the chart does not settle it), or "n_a" for a single agent's \
low-confidence answer with nothing to compare it against (always "n_a" on a low-confidence \
cell). Keep the two fields consistent: an agent you call correct is not the one in error.
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
    return RULES + "\n" + DATA_RULE + "\n" + (OUTPUT_STRUCTURED if structured
                                              else OUTPUT_SENTINEL)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _schema_line(criterion: Criterion) -> str:
    schema = criterion.answer_schema.model_dump(mode="json", exclude_none=True)
    return f"answer_schema: {json.dumps(schema, sort_keys=True)}"


def _gate_line(criterion: Criterion) -> str | None:
    if criterion.gate is None:
        return None
    return (f"Gate: applies only when {criterion.gate.field_id} = "
            f"{json.dumps(criterion.gate.value)}")


def skill_text(skill: Skill) -> str:
    """The whole phenotype skill: its description, every criterion, every edge case."""
    lines = [f"# Phenotype skill: {skill.name}", "", "## Skill description (SKILL.md)",
             skill.files.get("SKILL.md", "(no SKILL.md)").strip(), "", "## Criteria"]
    for crit in skill.criteria.values():
        lines += ["", f"### {crit.field_id}", f"Question: {crit.prompt}", _schema_line(crit)]
        gate = _gate_line(crit)
        if gate:
            lines.append(gate)
        if crit.uses.edge_cases:
            lines.append(f"Edge cases: {', '.join(crit.uses.edge_cases)}")
    lines += ["", "## Edge cases"]
    for name, text in skill.edge_cases.items():
        lines += ["", f"### {name}", text.strip()]
    return "\n".join(lines)


def shared_text(skill: Skill, structured: bool) -> str:
    return rules_text(structured) + "\n" + skill_text(skill)


def criterion_text(skill: Skill, criterion: Criterion) -> str:
    lines = [f"# Criterion under review: {criterion.field_id}",
             f"Question: {criterion.prompt}", _schema_line(criterion)]
    gate = _gate_line(criterion)
    if gate:
        lines.append(gate)
    if criterion.keywords:
        lines.append(f"Keywords: {', '.join(criterion.keywords)}")
    lines += ["", "Definition:", criterion.body or "(none)"]
    for name in criterion.uses.edge_cases:
        lines += ["", f"Edge case '{name}':", skill.edge_cases.get(name, "(missing)").strip()]
    return "\n".join(lines)


def cache_marks(texts: list[str], min_cache_tokens: int) -> list[bool]:
    """Which blocks end a prefix long enough to cache (at most MAX_BREAKPOINTS)."""
    marks: list[bool] = []
    total = 0
    for text in texts:
        total += estimate_tokens(text)
        marks.append(total >= min_cache_tokens and sum(marks) < MAX_BREAKPOINTS)
    return marks


def build_request(skill: Skill, criterion: Criterion, job: JudgeJob, context: CaseContext, *,
                  structured: bool, max_tokens: int, notes: Mapping[str, str] | None = None,
                  gate_answer: Any = UNKNOWN,
                  min_cache_tokens: int = DEFAULT_MIN_CACHE_TOKENS,
                  boundary: str | None = None) -> LLMRequest:
    texts = [shared_text(skill, structured), criterion_text(skill, criterion)]
    marks = cache_marks(texts, min_cache_tokens)
    system = tuple(SystemBlock(t, cache=m) for t, m in zip(texts, marks, strict=True))
    case = case_text(job, context, criterion, notes=notes, gate_answer=gate_answer,
                     boundary=boundary)
    return LLMRequest(system=system, messages=({"role": "user", "content": case},),
                      max_tokens=max_tokens,
                      output_schema=shared_schema() if structured else None,
                      labels={"worker": "judge"})


def assistant_turn(response: LLMResponse) -> dict[str, Any] | None:
    """The model's turn as sent back: its raw content blocks (thinking blocks included)
    unmodified when the provider gave them, else its text."""
    if response.content:
        return {"role": "assistant", "content": list(response.content)}
    if response.text.strip():
        return {"role": "assistant", "content": response.text.strip()}
    return None


def repair_request(first: LLMRequest, response: LLMResponse, problems: list[str],
                   max_tokens: int | None = None) -> LLMRequest:
    """The one repair round-trip: the model sees its answer and what was wrong with it."""
    note = ("Your answer could not be used:\n" + "\n".join(f"- {p}" for p in problems)
            + "\nReply again with the complete corrected object, following the answer format.")
    messages: tuple[dict[str, Any], ...] = first.messages
    turn = assistant_turn(response)
    content: list[dict[str, Any]] = []
    if turn is not None:
        messages += (turn,)
        content = [{"type": "tool_result", "tool_use_id": b["id"], "is_error": True,
                    "content": "rejected"} for b in response.content
                   if isinstance(b, dict) and b.get("type") == "tool_use"]
    user: Any = [*content, {"type": "text", "text": note}] if content else note
    messages += ({"role": "user", "content": user},)
    # a conversation that used tools keeps their definitions (the API refuses tool blocks
    # without them) but may call none now
    return LLMRequest(system=first.system, messages=messages,
                      max_tokens=max_tokens or first.max_tokens, tools=first.tools,
                      tool_choice="none" if first.tools else first.tool_choice,
                      output_schema=first.output_schema, labels=first.labels)
