"""Quotation checks: what a text presents as a quote, and whether it occurs in a note.

A passage counts as presented as a quotation whatever marks enclose it: straight double
(``"..."``) or single (``'...'``) quotes, curly double or single quotes, low-high German
quotes, guillemets (``«...»``, ``»...«``, single angle quotes); and a field whose whole content is a
quote (a pointer wrapped in quote marks) is one with or without marks (:func:`field_quote`).
A straight single quote opens a quotation only where it cannot be an apostrophe (not after a
letter or digit) and closes it only where no letter or digit follows, so "the patient's
agents' answers" holds none.

"Verbatim" is compared after folding case, whitespace runs, curly quotes and dashes, so a
quote that only differs in line breaks or typography still counts; a quote with an ellipsis
must have each of its parts in the same source. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: (opening, closing) mark pairs. The straight single quote has its own apostrophe-aware rule.
PAIRS = (('"', '"'), ("\u201c", "\u201d"), ("\u201e", "\u201c"), ("\u2018", "\u2019"),
         ("\u201a", "\u2018"), ("\u00ab", "\u00bb"), ("\u00bb", "\u00ab"),
         ("\u2039", "\u203a"))
_PAIRED = "|".join(f"{re.escape(o)}([^{re.escape(c)}\n]+){re.escape(c)}" for o, c in PAIRS)
_SINGLE = r"(?<![\w'])'([^'\n]+?)'(?!\w)"
_QUOTED = re.compile(f"{_PAIRED}|{_SINGLE}")
MARKS = "\"'\u201c\u201d\u201e\u2018\u2019\u201a\u00ab\u00bb\u2039\u203a\u300c\u300d"
_FOLD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                       "\u2013": "-", "\u2014": "-", "\u00a0": " "})
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\u2026)\s*")
#: Shorter quoted strings ("yes", "no_info") are names of values, not quotations.
MIN_WORDS, MIN_CHARS = 3, 15


def fold(text: str) -> str:
    return " ".join(text.translate(_FOLD).casefold().split())


def long_enough(span: str) -> bool:
    return len(span.split()) >= MIN_WORDS or len(span) >= MIN_CHARS


def quoted_spans(text: str) -> list[str]:
    """The passages ``text`` presents as quotations (long enough to be one), whatever
    quote marks enclose them."""
    spans = []
    for m in _QUOTED.finditer(text):
        span = next((g for g in m.groups() if g), "").strip()
        if long_enough(span):
            spans.append(span)
    return spans


def is_wrapped(text: str) -> bool:
    """Whether ``text`` as a whole is enclosed in quote marks (trailing punctuation aside)."""
    t = text.strip().rstrip(" .,;:")
    return len(t) >= 2 and t[0] in MARKS and t[-1] in MARKS


def field_quote(text: str) -> str:
    """A field that is a quote as a whole: its text without enclosing marks and edge
    punctuation (the marks are optional there)."""
    return text.strip().strip(MARKS + " .,;:").strip()


def occurs(quote: str, sources: Iterable[str]) -> bool:
    parts = [fold(p).strip(" .,;:") for p in _ELLIPSIS.split(quote)]
    parts = [p for p in parts if p]
    if not parts:
        return True
    for source in sources:
        folded = fold(source)
        if all(p in folded for p in parts):
            return True
    return False


def locate(quote: str, text: str) -> tuple[int, int] | None:
    """Offsets of ``quote`` in ``text`` (whitespace- and case-tolerant), or None."""
    words = quote.translate(_FOLD).split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(w) for w in words)
    m = re.search(pattern, text.translate(_FOLD), re.IGNORECASE)
    return (m.start(), m.end()) if m else None
