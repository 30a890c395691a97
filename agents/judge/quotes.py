"""Quotation checks: what a text presents as a quote, and whether it occurs in a note.

The chart-review skill's rule is "never invent quotes; quote verbatim from notes you actually
read", so every passage presented as a quotation is checked, whatever presents it:

* quote marks (:data:`PAIRS`): straight and curly double quotes, low-high German quotes,
  guillemets (double and single, either direction), CJK corner brackets (U+300C/U+300D and
  U+300E/U+300F), full-width double quotes, TeX quotes (two backticks ... two apostrophes)
  and backticks;
* single quotes (:data:`SINGLE`: straight, curly U+2018/U+2019, low U+201A/U+2018), where
  an apostrophe cannot open or close them: a quote opens only where no letter or digit
  precedes the mark and closes only where none follows it, and an apostrophe between two
  letters inside it (patient's, don't; straight or curly) belongs to the quotation, so
  "the patient's chart and the agents' answers" holds none while
  "'the patient's HbA1c was 9.9 percent'" holds one;
* no marks at all: a passage introduced as a quotation by a reporting word and a colon
  (:data:`CUES`: "the note reads: HbA1c 9.9% on review.") up to the end of its sentence, and
  a Markdown block quote (a line starting with ``>``);
* a field whose whole content is a quote (a pointer wrapped in quote marks) is one with or
  without marks (:func:`field_quote`).

Spans shorter than :data:`MIN_WORDS` words and :data:`MIN_CHARS` characters name values
("yes", 'no_info'), not quotations. "Verbatim" is compared after folding case, whitespace
runs, curly quotes and dashes, so a quote that only differs in line breaks or typography
still counts; a quote with an ellipsis must have each of its parts in the same source.
Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: (opening, closing) mark pairs whose closing mark is never an apostrophe.
PAIRS = (('"', '"'), ("\u201c", "\u201d"), ("\u201e", "\u201c"), ("\u00ab", "\u00bb"),
         ("\u00bb", "\u00ab"), ("\u2039", "\u203a"), ("\u203a", "\u2039"),
         ("\u300c", "\u300d"), ("\u300e", "\u300f"), ("\uff02", "\uff02"),
         ("``", "''"), ("`", "`"))
#: single-quote openings and the marks that close them (a typed quote may close curly)
SINGLE = (("'", "'\u2019"), ("\u2018", "\u2019'"), ("\u201a", "\u2018"))
_APOSTROPHES = "'\u2019"
#: reporting words that present what follows their colon as the note's own words
#: (verbs, not nouns such as "notes" or "records": "Other notes: n01, n02" quotes nothing)
CUES = ("states", "stated", "reads", "says", "said", "writes", "wrote", "documents",
        "documented", "recorded", "noted", "charted", "quote", "quoted", "quoting",
        "verbatim", "excerpt", "wording")


def _pair(o: str, c: str) -> str:
    inner = rf"[^{re.escape(c)}\n]" if len(c) == 1 else rf"(?:(?!{re.escape(c)})[^\n])"
    return rf"{re.escape(o)}({inner}+?){re.escape(c)}"


def _single(o: str, c: str) -> str:
    closing, marks = re.escape(c), re.escape(_APOSTROPHES)
    inner = rf"(?:[^{closing}{re.escape(o)}\n]|(?<=\w)[{marks}](?=\w))"
    return rf"(?<![\w{marks}]){re.escape(o)}(?=\S)({inner}+?)(?<=\S)[{closing}](?!\w)"


_MARK_OPEN = "".join(sorted({re.escape(o[0]) for o, _ in PAIRS} | {o for o, _ in SINGLE}))
_CUED = (rf"\b(?:{'|'.join(CUES)})\s*:[ \t]*(?![{_MARK_OPEN}\s])"
         r"((?:[^\n.!?;]|[.!?](?=\S))+)")
_BLOCK = r"^[ \t]*>[ \t]?(.+)$"
_QUOTED = re.compile("|".join([*(_pair(o, c) for o, c in PAIRS),
                               *(_single(o, c) for o, c in SINGLE)]))
_UNMARKED = re.compile(f"{_CUED}|{_BLOCK}", re.IGNORECASE | re.MULTILINE)
MARKS = "\"'`\u201c\u201d\u201e\u2018\u2019\u201a\u00ab\u00bb\u2039\u203a\u300c\u300d" \
    "\u300e\u300f\uff02"
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
    quote marks enclose them, or none (a reporting word and a colon; a block quote)."""
    spans = []
    for pattern in (_QUOTED, _UNMARKED):
        for m in pattern.finditer(text):
            span = next((g for g in m.groups() if g), "").strip().rstrip(" ,:")
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
