"""Pointers checked against what the judge saw (with chart tools). Pure functions.

Offsets are already checked against the note itself (:func:`agents.judge.validate.
check_pointers`) and quotes against the texts the judge was shown, tool results included.
A judge that could open any note is held to what it opened: a pointer into a note it was
neither shown nor opened is flagged ``pointer_unread``, and one whose offsets lie outside
every span it saw of that note ``pointer_outside_read`` (the reviewer should know the judge
points at text it did not read). Messages name pointers by position, never note ids.
"""

from __future__ import annotations

from collections.abc import Mapping

from agents.context.assemble import merge_spans
from agents.judge.validate import problem
from schemas.chart_review import JudgeAnalysis, ValidationProblem

Span = tuple[int, int]


def seen_spans(*sources: Mapping[str, list[Span]]) -> dict[str, list[Span]]:
    joined: dict[str, list[Span]] = {}
    for src in sources:
        for note_id, spans in src.items():
            joined.setdefault(note_id, []).extend(spans)
    return {n: merge_spans(s) for n, s in joined.items()}


def check_read(analysis: JudgeAnalysis, seen: Mapping[str, list[Span]]
               ) -> list[ValidationProblem]:
    found = []
    for i, p in enumerate(analysis.evidence_pointers, 1):
        spans = seen.get(p.note_id)
        if not spans:
            found.append(problem("pointer_unread", f"pointer {i} names a note the judge was "
                                 "neither shown nor opened with its tools"))
        elif p.offsets is not None and not any(s <= p.offsets[0] and p.offsets[1] <= e
                                               for s, e in spans):
            found.append(problem("pointer_outside_read", f"pointer {i}'s offsets lie outside "
                                 "every span of the note the judge saw"))
    return found
