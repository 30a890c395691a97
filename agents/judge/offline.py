"""The offline judge: a deterministic heuristic that needs no network (demo, degraded mode).

It does not read the chart clinically; it checks what can be checked mechanically and says
so in its reasoning. For every agent answer it measures:

* **validity** — the answer canonicalises to a value of the criterion's ``answer_schema``;
* **grounding** — each evidence quote occurs (case/whitespace-tolerant) in the note it cites;
* **negation** — a negation or family-history cue (``no``, ``denies``, ``negative for``,
  ``ruled out``, ``mother`` ...) in the quote or just before it, which contradicts an
  affirmative answer (``true``/``"yes"``) and supports a negative one.

Score = grounded quotes - ungrounded quotes - 2 x contradicting quotes (invalid answers lose).
Disagreement: the higher score wins (``agent_correctness`` = the winner, hint = the loser's
error); a tie gives ``null`` + ``neither`` + ``true_ambiguity``. Low confidence: the agent's
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
LABELS = ("agent_a", "agent_b")
_NEG = re.compile(r"\b(no|not|denies|denied|negative for|without|ruled out|rule out|r/o|"
                  r"family history|mother|father|sister|brother|never)\b", re.I)


@dataclass
class Grade:
    label: str
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


def _show(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def offline_payload(job: JudgeJob, criterion: Criterion,
                    notes: Mapping[str, str]) -> dict[str, Any]:
    """A JudgeAnalysis-shaped dict for ``job`` (validated by the caller like any answer)."""
    grades = [grade(LABELS[i], a, criterion, notes) for i, a in enumerate(job.answers[:2])]
    uncited = [n for n, t in notes.items() if n not in cited_notes(job.answers)
               and keyword_hits(t, criterion.keywords)]
    suggested: Any
    if job.kind == "disagreement" and len(grades) == 2:
        a, b = grades
        if a.score == b.score:
            # a disagreement never has n_a correctness: neither agent is shown right
            suggested, correct, hint, conf = None, "neither", "true_ambiguity", "low"
            pick = a if a.grounded else b
        else:
            pick, other = (a, b) if a.score > b.score else (b, a)
            suggested, correct = pick.answer, pick.label
            hint = f"{other.label}_error"
            conf = "medium" if pick.clean and pick.score - other.score >= 2 else "low"
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
