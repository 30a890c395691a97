"""Quotation checks: what a text presents as a quote, and whether it occurs in a note.

"Verbatim" is compared after folding case, whitespace runs, curly quotes and dashes, so a
quote that only differs in line breaks or typography still counts; a quote with an ellipsis
must have each of its parts in the same source. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_QUOTED = re.compile(r"\"([^\"]+)\"|\u201c([^\u201d]+)\u201d")
_FOLD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                       "\u2013": "-", "\u2014": "-", "\u00a0": " "})
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\u2026)\s*")
#: Shorter quoted strings ("yes", "no_info") are names of values, not quotations.
MIN_WORDS, MIN_CHARS = 3, 15


def fold(text: str) -> str:
    return " ".join(text.translate(_FOLD).casefold().split())


def quoted_spans(text: str) -> list[str]:
    """The passages ``text`` presents as quotations (long enough to be one)."""
    spans = []
    for m in _QUOTED.finditer(text):
        span = (m.group(1) or m.group(2) or "").strip()
        if len(span.split()) >= MIN_WORDS or len(span) >= MIN_CHARS:
            spans.append(span)
    return spans


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
