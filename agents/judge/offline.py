"""The offline judge: a deterministic heuristic that needs no network (demo, degraded mode).

It does not read the chart clinically; it checks what can be checked mechanically and says
so in its reasoning. For every agent answer it measures:

* **validity** — the answer canonicalises to a value of the criterion's ``answer_schema``;
* **grounding** — each evidence quote occurs (case/whitespace-tolerant) in the note it cites;
* **negation** — a negation or family-history cue (``no``, ``denies``, ``negative for``,
  ``ruled out``, ``mother`` ...) in the quote or just before it, which contradicts an
  affirmative answer (``true``/``"yes"``) and supports a negative one.

Score = grounded quotes - ungrounded quotes - 2 x contradicting quotes (invalid answers lose).
Every agent of the job is graded, named by its id in the reasoning and the pointers.
Disagreement: the highest score wins (``agent_correctness`` = the first two agents whose
answer is the winner's, hint = the error of the one of the first two that answered
otherwise, ``n_a`` when both or neither did: the contract's tokens blame one of the first
two only, so a third agent's error is said in the reasoning and by ``correct_agents``);
a tie for the top gives ``null`` + ``neither`` + ``true_ambiguity``. Low confidence: the agent's
answer is kept unless its own quotes contradict it. Confidence is never ``high`` (a heuristic
cannot be sure), ``medium`` only when the winner's quotes are all grounded and uncontradicted
and the margin is clear, and ``low`` when the answer is ``no_info`` although uncited notes mention
the criterion's keywords. The result goes through the same validation as a model's answer.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.context.assemble import cited_notes, keyword_hits
from agents.judge.quotes import locate
from schemas.chart_review import AgentAnswer, JudgeJob
from schemas.skill import Criterion
from streams.detect.normalize import Invalid, canonicalize, to_json_value

VERSION = "offline-heuristic-v1"
#: The contract's positional labels of the first two agents.
LABELS = ("agent_a", "agent_b")
_NEG = re.compile(r"\b(no|not|denies|denied|negative for|without|ruled out|rule out|r/o|"
                  r"family history|mother|father|sister|brother|never)\b", re.I)


@dataclass
class Grade:
    label: str  # the agent's id, as every screen names it
    answer: Any
    valid: bool
    grounded: list[tuple[str, tuple[int, int]]] = field(default_factory=list)
    ungrounded: int = 0
    contradicting: int = 0

    @property
    def score(self) -> int:
        if not self.valid:
            return -100
        return len(self.grounded) - self.ungrounded - 2 * self.contradicting

    @property
    def clean(self) -> bool:
        return self.valid and not self.ungrounded and not self.contradicting and bool(self.grounded)


def grade(label: str, answer: AgentAnswer, criterion: Criterion,
          notes: Mapping[str, str]) -> Grade:
    canon = canonicalize(answer.answer, criterion.answer_schema)
    g = Grade(label, None if isinstance(canon, Invalid) else to_json_value(canon),
              not isinstance(canon, Invalid))
    for ev in answer.evidence:
        note = notes.get(ev.note_id)
        span = locate(ev.quote, note) if note is not None else None
        if note is None or span is None:
            g.ungrounded += 1
            continue
        g.grounded.append((ev.note_id, span))
        window = note[max(0, span[0] - 40): span[1]]
        negated = bool(_NEG.search(window))
        if negated and (g.answer is True or g.answer == "yes"):
            g.contradicting += 1
    return g


def _describe(g: Grade) -> str:
    total = len(g.grounded) + g.ungrounded
    if not g.valid:
        return f"{g.label}'s answer is not a value the answer_schema allows."
    if total == 0:
        return f"{g.label} answered {_show(g.answer)} without citing any passage."
    text = (f"{g.label} answered {_show(g.answer)}; {len(g.grounded)} of {total} cited "
            "passages occur in the notes")
    if g.contradicting:
        text += f", {g.contradicting} with a negation cue that contradicts the answer"
    return text + "."


def _positional(first_two: list[Grade], answer: Any) -> tuple[str, str]:
    """``agent_correctness`` and ``classification_hint`` in the contract's tokens: which of
    the first two agents gave ``answer``; the error of the one that did not when exactly one
    did not, else ``n_a`` (the tokens cannot blame two agents, nor a later one)."""
    right = [g.answer == answer for g in first_two]
    correct = {(True, True): "both", (True, False): "agent_a",
               (False, True): "agent_b"}.get((right[0], right[1]), "neither")
    wrong = [i for i in range(2) if not right[i]]
    return correct, f"{LABELS[wrong[0]]}_error" if len(wrong) == 1 else "n_a"


def _show(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def offline_payload(job: JudgeJob, criterion: Criterion,
                    notes: Mapping[str, str]) -> dict[str, Any]:
    """A JudgeAnalysis-shaped dict for ``job`` (validated by the caller like any answer)."""
    grades = [grade(a.agent_id, a, criterion, notes) for a in job.answers]
    uncited = [n for n, t in notes.items() if n not in cited_notes(job.answers)
               and keyword_hits(t, criterion.keywords)]
    suggested: Any
    if job.kind == "disagreement" and len(grades) >= 2:
        ranked = sorted(grades, key=lambda g: -g.score)
        top, runner = ranked[0], next((g for g in ranked[1:] if g.answer != ranked[0].answer),
                                      ranked[1])
        if top.score == runner.score:
            # a disagreement never has n_a correctness: neither agent is shown right
            suggested, correct, hint, conf = None, "neither", "true_ambiguity", "low"
            pick = next((g for g in grades if g.grounded), grades[0])
        else:
            pick, suggested = top, top.answer
            correct, hint = _positional(grades[:2], top.answer)
            conf = "medium" if pick.clean and pick.score - runner.score >= 2 else "low"
    else:
        pick = grades[0]
        correct, hint = "n_a", "n_a"
        if pick.contradicting or not pick.valid:
            suggested, conf = None, "low"
            hint = "n_a" if job.kind == "low_confidence" else "true_ambiguity"
        else:
            suggested, conf = pick.answer, "medium" if pick.clean else "low"
    if suggested == "no_info" and uncited:
        conf = "low"
    look = f"passage cited by {pick.label}"
    pointers: list[dict[str, Any]] = [
        {"note_id": n, "what_to_look_for": look, "offsets": list(span)}
        for n, span in pick.grounded[:3]]
    if not pointers and uncited:
        pointers = [{"note_id": uncited[0], "what_to_look_for": "uncited note matching the "
                     "criterion keywords", "offsets": None}]
    sentences = [_describe(g) for g in grades]
    if uncited:
        sentences.append(f"{len(uncited)} note(s) no agent cited mention the criterion's "
                         "keywords.")
    sentences.append("Offline heuristic judge: quote grounding, negation cues and answer "
                     "validity only, no clinical reading, so confidence is at most medium.")
    return {"suggested_answer": suggested, "reasoning": " ".join(sentences[:4]),
            "evidence_pointers": pointers, "agent_correctness": correct,
            "classification_hint": hint, "judge_confidence": conf}
