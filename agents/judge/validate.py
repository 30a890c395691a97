"""Validate a judge answer in code; the model is never trusted. Pure functions.

Every problem found becomes a typed :class:`ValidationProblem` with what was done about it:

==========================  ===========  ====================================================
type                        action       meaning
==========================  ===========  ====================================================
not_an_object               fallback     the answer is not a JSON object
unknown_key / missing_key   fallback     keys differ from the JudgeAnalysis contract
invalid_field               fallback     a field has the wrong type or a value outside its set
answer_not_in_schema        fallback     suggested_answer is not a value the criterion allows
empty_reasoning             fallback     reasoning is empty
noncanonical_answer         repaired     suggested_answer rewritten to the schema's spelling
note_id_suffix              repaired     a pointer's note id ends in ``.txt`` (the file name);
                                         the suffix is stripped (the rule: no ".txt")
unknown_note                dropped      a pointer names a note this patient does not have
offsets_out_of_range        repaired     pointer offsets outside the note; set to null
too_many_pointers           repaired     more than three pointers; the first three kept
rule_violation etc.         see          the field rules of :mod:`agents.judge.rules`
                            rules.py
unverified_quote            flagged      a passage presented as a quote (in the reasoning or
                                         a pointer; any quote marks, see
                                         :mod:`agents.judge.quotes`) found in no note shown
                                         to the judge; confidence lowered
hedging / reasoning_length  flagged      style rules of the reasoning broken (2-4 sentences)
sentinel_blocks             fallback,    not exactly one analysis block (:mod:`.parse`: a
                            then         forged block copied from a note?); repaired by the
                            flagged      round-trip, the result still stays ``flagged``
duplicate_key               fallback     the answer object repeats a key
multiple_answers            fallback,    more than one tool call, or a tool call and a
                            then         sentinel tag in the text; repaired by the
                            flagged      round-trip, the result still stays ``flagged``
==========================  ===========  ====================================================

"fallback" problems mean no analysis could be built (the orchestrator first tries one repair
round-trip, then publishes the fallback record). Problems in :data:`NEEDS_REVIEW` (an invented
quote, no usable pointer, an unresolved contradiction) make the result ``flagged`` instead of
``ok``; an invented quote (:data:`REPAIRABLE`) first gets the one repair round-trip. A
problem in :data:`UNTRUSTED` (an answer that may carry an analysis copied from a note) is
never settled by the repair: it stays ``flagged``, so that result is never ``ok``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import ValidationError

from agents.judge.output_schema import FIELDS
from agents.judge.quotes import field_quote, is_wrapped, long_enough, occurs, quoted_spans
from agents.judge.rules import check_pointer_text, check_rules
from schemas.chart_review import JobKind, JudgeAnalysis, ValidationProblem
from schemas.skill import Criterion
from streams.detect.normalize import Invalid, canonicalize, to_json_value

LOWER = {"high": "medium", "medium": "low", "low": "low"}
_HEDGES = ("based on", "i think", "i believe", "it appears", "it seems", "after reviewing")
_SENTENCE = re.compile(r"[.!?]+(?:\s|$)")
_ABBREV = re.compile(r"\b(?:e\.g|i\.e|vs|dr|mr|mrs|ms|approx|etc|no|pt)\.", re.I)
_QUOTE = re.compile(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d")
#: flagged problems that make a result ``flagged`` instead of ``ok`` if a repair fails.
NEEDS_REVIEW = frozenset({"unverified_quote", "no_evidence_pointers", "contradictory_fields",
                          "sentinel_blocks"})
#: problems of a first answer that a clean repair does not clear (the repair asked a model
#: that was just shown, and echoed, a forged analysis): they stay ``flagged``.
UNTRUSTED = frozenset({"sentinel_blocks", "multiple_answers"})
#: flagged problems worth one repair round-trip before the result is published.
REPAIRABLE = frozenset({"unverified_quote"})
MIN_SENTENCES, MAX_SENTENCES = 2, 4


def needs_review(problems: Sequence[ValidationProblem],
                 types: frozenset[str] = NEEDS_REVIEW) -> list[ValidationProblem]:
    return [p for p in problems if p.type in types and p.action == "flagged"]


def sentences(text: str) -> int:
    """Sentences in ``text``; quoted passages and common abbreviations do not end one."""
    plain = _ABBREV.sub("x", _QUOTE.sub(
        lambda m: '"q".' if m.group(0)[:-1].rstrip().endswith((".", "!", "?")) else '"q"',
        text.strip()))
    return len([s for s in _SENTENCE.split(plain) if s.strip(" \"'")])


@dataclass(frozen=True)
class Check:
    analysis: JudgeAnalysis | None
    problems: tuple[ValidationProblem, ...]


def problem(kind: str, message: str, action: str = "flagged") -> ValidationProblem:
    return ValidationProblem(type=kind, message=message, action=action)  # type: ignore[arg-type]


def _same(a: Any, b: Any) -> bool:
    opt = orjson.OPT_SORT_KEYS
    return orjson.dumps(a, option=opt) == orjson.dumps(b, option=opt)


def check_answer(raw: Any, criterion: Criterion) -> tuple[Any, list[ValidationProblem]]:
    """The schema spelling of ``raw`` (None stays None), or an ``answer_not_in_schema``."""
    if raw is None:
        return None, []
    canon = canonicalize(raw, criterion.answer_schema)
    if isinstance(canon, Invalid):
        return None, [problem("answer_not_in_schema", f"suggested_answer is not one of the "
                              f"values criterion {criterion.field_id} allows ({canon.reason})",
                              "fallback")]
    value = to_json_value(canon)
    if _same(value, raw):
        return value, []
    return value, [problem("noncanonical_answer", "suggested_answer rewritten to the "
                           "answer_schema's spelling", "repaired")]


def check_pointers(raw: Any, notes: Mapping[str, str]) -> tuple[Any, list[ValidationProblem]]:
    if not isinstance(raw, list):
        return raw, []  # the model validation reports the type
    found: list[ValidationProblem] = []
    kept: list[Any] = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("note_id"), str):
            kept.append(item)
            continue
        note_id = item["note_id"]
        if note_id not in notes and note_id.lower().endswith(".txt") \
                and note_id[:-4] in notes:
            item = {**item, "note_id": note_id[:-4]}
            found.append(problem("note_id_suffix", "a pointer's note id ended in .txt; the "
                                 "suffix was stripped", "repaired"))
        note = notes.get(item["note_id"])
        if note is None:
            found.append(problem("unknown_note", "a pointer named a note that does not exist "
                                 "for this patient; pointer dropped", "dropped"))
            continue
        off = item.get("offsets")
        if (isinstance(off, list) and len(off) == 2 and all(isinstance(o, int) for o in off)
                and not 0 <= off[0] <= off[1] <= len(note)):
            item = {**item, "offsets": None}
            found.append(problem("offsets_out_of_range", f"offsets {off} are outside note of "
                                 f"{len(note)} characters; set to null", "repaired"))
        kept.append(item)
    if len(kept) > 3:
        found.append(problem("too_many_pointers", f"{len(kept)} pointers; first 3 kept",
                             "repaired"))
        kept = kept[:3]
    return kept, found


def presented_quotes(a: JudgeAnalysis) -> list[tuple[str, str]]:
    """Every passage the analysis presents as a quotation, with where it stands: quoted
    spans of the reasoning and of each pointer's what_to_look_for (a pointer wrapped in
    quote marks as a whole is one, however short its marks make it look)."""
    spans = [("reasoning", q) for q in quoted_spans(a.reasoning)]
    for i, p in enumerate(a.evidence_pointers, 1):
        text = p.what_to_look_for
        inner = quoted_spans(text)
        if not inner and is_wrapped(text) and long_enough(field_quote(text)):
            inner = [field_quote(text)]
        spans += [(f"pointer {i}", q) for q in inner]
    return spans


def check_reasoning(a: JudgeAnalysis, sources: Sequence[str]
                    ) -> tuple[JudgeAnalysis, list[ValidationProblem]]:
    found = [problem("unverified_quote", f"a quoted passage of {len(q)} characters in the "
                     f"{where} occurs in no note the judge was given")
             for where, q in presented_quotes(a) if not occurs(q, sources)]
    if found:
        a = a.model_copy(update={"judge_confidence": LOWER[a.judge_confidence]})
    text = a.reasoning.strip().lower()
    if text.startswith(_HEDGES):
        found.append(problem("hedging", "reasoning opens with hedging boilerplate"))
    n = sentences(a.reasoning)
    if not MIN_SENTENCES <= n <= MAX_SENTENCES and not text.startswith("judge could not"):
        found.append(problem("reasoning_length", f"reasoning has {n} sentence(s), not "
                             f"{MIN_SENTENCES}-{MAX_SENTENCES}"))
    return a, found


def validate_analysis(payload: Any, *, criterion: Criterion, notes: Mapping[str, str],
                      n_agents: int, extra_sources: Sequence[str] = (),
                      kind: JobKind | None = None, agent_answers: Sequence[Any] = (),
                      shown: Sequence[str] | None = None) -> Check:
    """``payload`` (a decoded model answer) -> a JudgeAnalysis or the reasons it is unusable.

    ``notes`` are all of the patient's notes (pointer checks); ``shown`` the note texts the
    judge was shown (quote checks; all notes when None); ``extra_sources`` other texts a
    quotation may legitimately come from (the criterion file); ``kind`` and
    ``agent_answers`` (canonical, agent A first) feed the field rules."""
    if not isinstance(payload, dict):
        return Check(None, (problem("not_an_object", "the answer is not a JSON object",
                                    "fallback"),))
    fatal = [problem("unknown_key", f"unknown key {str(k)[:40]!r}", "fallback")
             for k in payload if k not in FIELDS]
    fatal += [problem("missing_key", f"missing key {k!r}", "fallback")
              for k in FIELDS if k not in payload]
    if fatal:
        return Check(None, tuple(fatal))
    answer, found = check_answer(payload["suggested_answer"], criterion)
    pointers, more = check_pointers(payload["evidence_pointers"], notes)
    found += more
    if any(p.action == "fallback" for p in found):
        return Check(None, tuple(found))
    try:
        analysis = JudgeAnalysis.model_validate(
            {**payload, "suggested_answer": answer, "evidence_pointers": pointers})
    except ValidationError as exc:
        bad = ", ".join(sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()}))
        return Check(None, (*found, problem("invalid_field", f"invalid value in: {bad}",
                                            "fallback")))
    if not analysis.reasoning.strip():
        return Check(None, (*found, problem("empty_reasoning", "reasoning is empty",
                                            "fallback")))
    analysis, more = check_rules(analysis, n_agents=n_agents, kind=kind,
                                 agent_answers=agent_answers)
    found += more
    found += check_pointer_text(analysis, notes)
    sources = list(notes.values()) if shown is None else list(shown)
    analysis, more = check_reasoning(analysis, [*sources, *extra_sources])
    found += more
    return Check(analysis, tuple(found))
