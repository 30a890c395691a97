"""The chart-review judge's field rules, enforced in code. Pure functions.

==========================  ==========  =====================================================
type                        action      rule
==========================  ==========  =====================================================
rule_violation              repaired    low_confidence cell: agent_correctness and
                                        classification_hint are ``n_a`` (however many
                                        answers the job carries); one agent only: no agent_b
                                        verdict; a null suggested_answer: confidence ``low``
                                        and hint ``true_ambiguity`` (``n_a`` on a
                                        low_confidence cell, where that rule wins); a
                                        disagreement never has ``n_a`` agent_correctness
                                        (derived from which agent's answer was suggested)
contradictory_fields        repaired /  agent_correctness and classification_hint (or the
                            flagged     suggested answer) contradict each other; repaired
                                        when the suggested answer names one agent, otherwise
                                        flagged (the result's status becomes ``flagged``)
no_evidence_pointers        flagged     no usable pointer is left (the skill wants 1 to 3)
pointer_not_a_phrase        flagged     what_to_look_for is a sentence or a copied quote
==========================  ==========  =====================================================
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from agents.judge.quotes import fold
from schemas.chart_review import JobKind, JudgeAnalysis, ValidationProblem

#: what_to_look_for longer than this is not "a short phrase".
MAX_PHRASE_WORDS = 10
#: a phrase of at least this many words found verbatim in a note is a copied quote.
QUOTE_PHRASE_WORDS = 4
#: which agent an error hint blames, and the correctness that hint implies.
_ERROR_OF = {"agent_a_error": "agent_a", "agent_b_error": "agent_b"}
_HINT_FOR = {"agent_a": "agent_b_error", "agent_b": "agent_a_error"}


def problem(kind: str, message: str, action: str = "flagged") -> ValidationProblem:
    return ValidationProblem(type=kind, message=message, action=action)  # type: ignore[arg-type]


def _same(a: Any, b: Any) -> bool:
    opt = orjson.OPT_SORT_KEYS
    return orjson.dumps(a, option=opt) == orjson.dumps(b, option=opt)


def supported_agent(suggested: Any, agent_answers: Sequence[Any]) -> str | None:
    """``agent_a``/``agent_b`` when the suggestion equals exactly one of the first two
    agents' canonical answers, ``neither`` when it equals none (or is null), else None."""
    if len(agent_answers) < 2:
        return None
    if suggested is None:
        return "neither"
    hits = [label for label, value in zip(("agent_a", "agent_b"), agent_answers[:2],
                                          strict=False) if _same(suggested, value)]
    if len(hits) == 1:
        return hits[0]
    return "neither" if not hits else None


def _contradiction(correctness: str, hint: str, supported: str | None) -> str | None:
    blamed = _ERROR_OF.get(hint)
    if blamed is not None and correctness in (blamed, "both", "neither"):
        return f"agent_correctness {correctness} with hint {hint}"
    if supported in ("agent_a", "agent_b") and correctness in ("agent_a", "agent_b") \
            and correctness != supported:
        return f"agent_correctness {correctness} but the suggested answer is {supported}'s"
    return None


def check_rules(a: JudgeAnalysis, *, n_agents: int, kind: JobKind | None = None,
                agent_answers: Sequence[Any] = ()
                ) -> tuple[JudgeAnalysis, list[ValidationProblem]]:
    found: list[ValidationProblem] = []
    fix: dict[str, Any] = {}

    def repair(field: str, value: str, why: str) -> None:
        fix[field] = value
        found.append(problem("rule_violation", why, "repaired"))

    if a.suggested_answer is None and a.judge_confidence != "low":
        repair("judge_confidence", "low", "a null suggested_answer must come with low "
               "judge_confidence")
    if kind == "low_confidence":
        if a.agent_correctness != "n_a":
            repair("agent_correctness", "n_a", "a low_confidence cell has n_a "
                   "agent_correctness")
        if a.classification_hint != "n_a":
            repair("classification_hint", "n_a", "a low_confidence cell has n_a "
                   "classification_hint")
        return (a.model_copy(update=fix) if fix else a), found
    if a.suggested_answer is None and a.classification_hint != "true_ambiguity":
        repair("classification_hint", "true_ambiguity", "a null suggested_answer must come "
               "with the true_ambiguity hint")
    if n_agents < 2:
        if a.agent_correctness != "n_a" and kind != "disagreement":
            repair("agent_correctness", "n_a", "agent_correctness must be n_a when only one "
                   "agent answered")
        if fix.get("classification_hint", a.classification_hint) == "agent_b_error":
            repair("classification_hint", "n_a", "agent_b_error named but there is no "
                   "agent B")
        return (a.model_copy(update=fix) if fix else a), found
    supported = supported_agent(a.suggested_answer, agent_answers)
    correctness = fix.get("agent_correctness", a.agent_correctness)
    hint = fix.get("classification_hint", a.classification_hint)
    if kind == "disagreement" and correctness == "n_a":
        derived = supported or "neither"
        repair("agent_correctness", derived, f"a disagreement never has n_a "
               f"agent_correctness; set to {derived} from the suggested answer")
        correctness = derived
    clash = _contradiction(correctness, hint, supported)
    if clash is not None:
        if supported in ("agent_a", "agent_b"):
            fix["agent_correctness"], fix["classification_hint"] = supported, _HINT_FOR[supported]
            found.append(problem("contradictory_fields", f"{clash}; set to {supported} / "
                                 f"{_HINT_FOR[supported]} from the suggested answer",
                                 "repaired"))
        else:
            found.append(problem("contradictory_fields", f"{clash}; left for the reviewer"))
    return (a.model_copy(update=fix) if fix else a), found


def check_pointer_text(a: JudgeAnalysis, notes: Mapping[str, str]
                       ) -> list[ValidationProblem]:
    found: list[ValidationProblem] = []
    folded = _Folded(notes)  # folded only if a long phrase must be looked up
    usable = 0
    for i, p in enumerate(a.evidence_pointers, 1):
        phrase = fold(p.what_to_look_for).strip(" .\"'")
        words = phrase.split()
        if not words:
            found.append(problem("pointer_not_a_phrase", f"pointer {i}: what_to_look_for is "
                                 "empty"))
            continue
        usable += 1
        if len(words) > MAX_PHRASE_WORDS:
            found.append(problem("pointer_not_a_phrase", f"pointer {i}: what_to_look_for has "
                                 f"{len(words)} words, not a short phrase"))
        elif len(words) >= QUOTE_PHRASE_WORDS and folded.contains(phrase):
            found.append(problem("pointer_not_a_phrase", f"pointer {i}: what_to_look_for is "
                                 "copied from a note, not a phrase naming what to check"))
    if usable == 0:
        found.append(problem("no_evidence_pointers", "no usable evidence pointer (1 to 3 "
                             "are required)"))
    return found


class _Folded:
    """The notes folded on first use (a chart of hundreds of notes costs half a second)."""

    def __init__(self, notes: Mapping[str, str]) -> None:
        self.notes = notes
        self.texts: list[str] | None = None

    def contains(self, phrase: str) -> bool:
        if self.texts is None:
            self.texts = [fold(t) for t in self.notes.values()]
        return any(phrase in t for t in self.texts)
