"""The encounter log as text: per-section lines (for the checklist grader) and the quote
check (evidence presented as a transcript quote must occur in the log)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from schemas.medkit import EncounterLog, Section

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                         "\u2013": "-", "\u2014": "-", "\u00a0": " "})
_SPACE = re.compile(r"\s+")
_ELLIPSIS = re.compile(r"\.\.\.|\u2026")
_EDGE = " \t\n\"'.,;:!?()[]"


def normalize(text: str) -> str:
    """Case-, quote-style- and whitespace-insensitive form used for matching."""
    return _SPACE.sub(" ", text.translate(_QUOTES).casefold()).strip()


def _join(*parts: str | None) -> str:
    return " ".join(p for p in parts if p)


def section_lines(log: EncounterLog) -> dict[Section, list[str]]:
    """Every textual element of the log, by section, as the trainee/patient wrote it."""
    sections: dict[Section, list[str]] = {
        "history": [line for h in log.history for line in (h.question, h.answer)],
        "tests": [_join(t.name, t.result) for t in log.tests],
        "treatments": [_join(t.name, t.dose) for t in log.treatments],
        "prescriptions": [_join(p.drug, p.dose, p.route, p.frequency)
                          for p in log.prescriptions],
        "escalations": [e.action for e in log.escalations],
        "safety_netting": list(log.safety_netting),
        "diagnosis": [log.submitted_diagnosis] if log.submitted_diagnosis else [],
    }
    sections["any"] = [line for lines in list(sections.values()) for line in lines]
    return sections


def find_line(lines: Iterable[str], phrases: Iterable[str]) -> str | None:
    """The first line containing any of ``phrases`` (normalized substring match)."""
    wanted = [normalize(p) for p in phrases if p.strip()]
    for line in lines:
        text = normalize(line)
        if any(w in text for w in wanted):
            return line
    return None


def quote_in_log(quote: str, log: EncounterLog) -> bool:
    """Whether ``quote`` occurs in the log. An ellipsis may elide text between pieces,
    which must then occur in order within one element of the log."""
    pieces = [normalize(p).strip(_EDGE) for p in _ELLIPSIS.split(quote)]
    pieces = [p for p in pieces if p]
    if not pieces:
        return True
    for line in section_lines(log)["any"]:
        text, at = normalize(line), 0
        for piece in pieces:
            found = text.find(piece, at)
            if found < 0:
                break
            at = found + len(piece)
        else:
            return True
    return False
