"""Choose what the judge reads from a patient's notes, within a character budget.

Order of priority: notes the agents cited (in citation order), then notes the agents did
not cite that mention the criterion's keywords (most hits first) — the ones they may have
missed. A note that fits is included whole; a longer one as windows around the cited
quotes or keyword hits. Every excerpt keeps its character offsets in the original note, so
pointers the judge returns can be checked against the note itself. Pure functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from agents.context.re2util import words
from schemas.chart_review import AgentAnswer

#: At most this share of the budget goes to one note the agents did not cite.
MISSED_NOTE_SHARE = 0.25
MAX_WINDOWS = 3


@dataclass(frozen=True)
class Excerpt:
    note_id: str
    start: int
    end: int
    text: str
    #: Whether an agent cited this note (False: found by keywords).
    cited: bool
    #: Length of the whole note, so the reader knows what was left out.
    note_length: int


@dataclass(frozen=True)
class CaseContext:
    excerpts: tuple[Excerpt, ...]
    #: Note ids the agents cited that do not exist for this patient.
    missing_cited: tuple[str, ...]
    #: Notes that matched keywords or were cited but did not fit the budget.
    left_out: tuple[str, ...]

    @property
    def chars(self) -> int:
        return sum(len(e.text) for e in self.excerpts)


def cited_notes(answers: Sequence[AgentAnswer]) -> list[str]:
    seen: dict[str, None] = {}
    for answer in answers:
        for ev in answer.evidence:
            seen.setdefault(ev.note_id, None)
    return list(seen)


def find_all(text: str, needle: str) -> list[int]:
    """Case-insensitive start positions of ``needle`` (whitespace-tolerant; RE2: a chart
    of hundreds of notes is ranked in a fraction of a second)."""
    program = words(needle)
    return [] if program is None else [m.start() for m in program.finditer(text)]


def keyword_hits(text: str, keywords: Iterable[str]) -> list[int]:
    hits: list[int] = []
    for kw in keywords:
        hits.extend(find_all(text, kw))
    return sorted(hits)


def windows(length: int, anchors: Sequence[int], limit: int) -> list[tuple[int, int]]:
    """Up to ``MAX_WINDOWS`` merged spans of total size <= ``limit`` around ``anchors``."""
    if length <= limit:
        return [(0, length)]
    picks = list(dict.fromkeys(anchors))[:MAX_WINDOWS] or [0]
    size = max(1, limit // len(picks))
    starts = sorted(max(0, min(a - size // 3, length - size)) for a in picks)
    return merge_spans((start, min(length, start + size)) for start in starts)


def merge_spans(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """``(start, end)`` spans sorted, overlapping or touching ones joined."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _excerpts(note_id: str, text: str, anchors: Sequence[int], limit: int,
              cited: bool) -> list[Excerpt]:
    return [Excerpt(note_id, s, e, text[s:e], cited, len(text))
            for s, e in windows(len(text), anchors, limit)]


def gather(answers: Sequence[AgentAnswer], keywords: Sequence[str], notes: Mapping[str, str],
           budget: int) -> CaseContext:
    cited = cited_notes(answers)
    missing = tuple(n for n in cited if n not in notes)
    quotes: dict[str, list[str]] = {}
    for answer in answers:
        for ev in answer.evidence:
            quotes.setdefault(ev.note_id, []).append(ev.quote)
    out: list[Excerpt] = []
    left_out: list[str] = []
    remaining = budget
    for note_id in (n for n in cited if n in notes):
        text = notes[note_id]
        anchors = [p for q in quotes.get(note_id, []) for p in find_all(text, q)[:1]]
        anchors += keyword_hits(text, keywords)
        if remaining < min(len(text), 200):
            left_out.append(note_id)
            continue
        part = _excerpts(note_id, text, anchors, remaining, cited=True)
        out += part
        remaining -= sum(len(e.text) for e in part)
    ranked = sorted(((len(keyword_hits(t, keywords)), n) for n, t in notes.items()
                     if n not in cited), key=lambda x: (-x[0], x[1]))
    for hits, note_id in ranked:
        if hits == 0:
            break
        text = notes[note_id]
        cap = min(remaining, max(200, int(budget * MISSED_NOTE_SHARE)))
        if cap < min(len(text), 200):
            left_out.append(note_id)
            continue
        part = _excerpts(note_id, text, keyword_hits(text, keywords), cap, cited=False)
        out += part
        remaining -= sum(len(e.text) for e in part)
    return CaseContext(tuple(out), missing, tuple(left_out))
