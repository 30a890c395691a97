"""The judge's chart tools: ``list_notes``, ``search_notes``, ``read_note``. Pure functions.

The chart-review skill tells the judge to read the notes the agents cited "plus any notes
the agents may have missed"; these tools let it do so within bounds (the tool loop is
:mod:`agents.judge.tool_loop`). Every tool is bounded per call (entries listed, hits and
window size, characters read), note ids are checked like every id from outside
(:func:`schemas.base.check_safe_id`: nothing outside the patient's folder can be named,
and only notes of this patient exist), and note text is returned framed as data
(:mod:`agents.framing`) with a boundary drawn for that result. A pattern is run by RE2
(linear time, bounded memory): no pattern can backtrack catastrophically, and one RE2
refuses (a back-reference, a look-around) is searched as plain words instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agents.context import re2util
from agents.framing import announce, block, new_boundary
from schemas.base import check_safe_id

LIST, SEARCH, READ = "list_notes", "search_notes", "read_note"
NAMES = (LIST, SEARCH, READ)
ToolName = Literal["list_notes", "search_notes", "read_note"]
MAX_LISTED = 100  # entries per list_notes call (``from_index`` pages on)
MAX_PATTERN = 200  # characters of a search pattern
MAX_HITS = 20  # hits per search_notes call
WINDOW = 100  # characters either side of a hit
MAX_READ = 4000  # characters per read_note call
_HEAD = 600  # the part of a note where its date and type are looked for
_DATE = re.compile(r"\b(?:date(?: of service)?|dos)\s*:\s*(\d{4}-\d{2}-\d{2})", re.I)
_TYPE = re.compile(r"^[A-Z][A-Z0-9 /&,()-]{3,80}$", re.M)
MAX_COUNTED = 10_000  # hits counted before the count says "at least"

DEFINITIONS: tuple[dict[str, Any], ...] = (
    {"name": LIST, "description": (
        "List this patient's notes: id, date and type where the note header gives them, "
        f"and length in characters. At most {MAX_LISTED} per call; pass from_index to see "
        "more."),
     "input_schema": {"type": "object", "additionalProperties": False, "properties": {
         "from_index": {"type": "integer", "description": "first entry to list (0-based)"}}}},
    {"name": SEARCH, "description": (
        "Search every note of this patient for a regular expression (RE2 syntax, case-"
        "insensitive) or plain words. Returns note ids, character offsets and a short "
        f"window around each hit, at most {MAX_HITS} hits. Use it for spellings, brand "
        "names, abbreviations and lab names the criterion's keywords miss."),
     "input_schema": {"type": "object", "additionalProperties": False,
                      "required": ["pattern"], "properties": {
                          "pattern": {"type": "string",
                                      "description": f"at most {MAX_PATTERN} characters"}}}},
    {"name": READ, "description": (
        "Read characters start..end of one note (offsets as search_notes and the excerpts "
        f"give them), at most {MAX_READ} characters per call."),
     "input_schema": {"type": "object", "additionalProperties": False,
                      "required": ["note_id"], "properties": {
                          "note_id": {"type": "string"},
                          "start": {"type": "integer"}, "end": {"type": "integer"}}}},
)


@dataclass(frozen=True)
class Seen:
    """One thing a tool call showed the judge: a span of a note (read or a search window),
    or a listing (note_id None)."""

    tool: str
    note_id: str | None = None
    start: int = 0
    end: int = 0
    text: str = ""


@dataclass(frozen=True)
class Outcome:
    """A tool call's result: the tool_result content, whether it is an error, what it
    showed, and the characters of note text it returned (what the budget counts)."""

    content: str
    is_error: bool = False
    seen: tuple[Seen, ...] = ()
    pattern: str | None = None
    hits: int = 0

    @property
    def chars(self) -> int:
        return sum(len(s.text) for s in self.seen)


def error(message: str) -> Outcome:
    return Outcome(message, is_error=True)


def header_facts(text: str) -> tuple[str | None, str | None]:
    """(date, type) from a note's header, where it states them."""
    head = text[:_HEAD]
    date = _DATE.search(head)
    kind = next((m.group(0).strip() for m in _TYPE.finditer(head)
                 if "SYNTHETIC" not in m.group(0) and len(m.group(0).split()) >= 2), None)
    return (date.group(1) if date else None), kind


def list_notes(notes: Mapping[str, str], from_index: Any = 0) -> Outcome:
    start = from_index if isinstance(from_index, int) and from_index >= 0 else 0
    ids = sorted(notes)
    rows = []
    for note_id in ids[start:start + MAX_LISTED]:
        date, kind = header_facts(notes[note_id])
        rows.append(f"{note_id}\tdate={date or '-'}\ttype={kind or '-'}\t"
                    f"length={len(notes[note_id])}")
    more = len(ids) - start - len(rows)
    tail = f"\n({more} more: call again with from_index={start + len(rows)})" if more > 0 else ""
    return Outcome(f"{len(ids)} notes; entries {start}-{start + len(rows) - 1}:\n"
                   + "\n".join(rows) + tail, seen=(Seen(LIST),))


def compile_pattern(pattern: str) -> Any:
    """The RE2 program for ``pattern``; words when RE2 refuses it as a regex."""
    try:
        return re2util.compile_pattern(pattern)
    except re2util.error:
        return re2util.words(pattern)


def _framed(label_texts: list[tuple[str, str]], header: str) -> str:
    b = new_boundary(t for _, t in label_texts)
    return "\n".join([announce(b), header, *(block(b, label, t) for label, t in label_texts)])


def search_notes(notes: Mapping[str, str], pattern: Any) -> Outcome:
    if not isinstance(pattern, str) or not pattern.strip():
        return error("pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN:
        return error(f"pattern longer than {MAX_PATTERN} characters")
    program = compile_pattern(pattern)
    if program.search("") is not None:
        return error("the pattern matches empty text; search for words or a narrower "
                     "expression")
    seen: list[Seen] = []
    total = 0
    for note_id in sorted(notes):
        text = notes[note_id]
        for m in program.finditer(text):
            total += 1
            if len(seen) < MAX_HITS:
                s, e = max(0, m.start() - WINDOW), min(len(text), m.end() + WINDOW)
                seen.append(Seen(SEARCH, note_id, s, e, text[s:e]))
            if total >= MAX_COUNTED:
                break
        if total >= MAX_COUNTED:
            break
    if not seen:
        return Outcome(f"no hits for the pattern in {len(notes)} notes", pattern=pattern)
    count = f"at least {total}" if total >= MAX_COUNTED else str(total)
    header = (f"{count} hit(s); the first {len(seen)} shown" if total > len(seen)
              else f"{total} hit(s)")
    labels = [(f"note {s.note_id}; characters {s.start}-{s.end} of {len(notes[s.note_id])}",
               s.text) for s in seen if s.note_id is not None]
    return Outcome(_framed(labels, header), seen=tuple(seen), pattern=pattern, hits=total)


def read_note(notes: Mapping[str, str], note_id: Any, start: Any = 0,
              end: Any = None) -> Outcome:
    if not isinstance(note_id, str):
        return error("note_id must be a string")
    note_id = note_id.removesuffix(".txt")
    try:
        check_safe_id(note_id)
    except ValueError:
        return error("not a valid note id")
    text = notes.get(note_id)
    if text is None:
        return error(f"this patient has no note {note_id}; list_notes shows the ids")
    s = start if isinstance(start, int) else 0
    s = min(max(0, s), len(text))
    e = end if isinstance(end, int) else s + MAX_READ
    e = min(max(s, e), len(text), s + MAX_READ)
    cut = f" (cut to {MAX_READ} characters)" if isinstance(end, int) and end > e else ""
    part = text[s:e]
    label = f"note {note_id}; characters {s}-{e} of {len(text)}{cut}"
    return Outcome(_framed([(label, part)], f"note {note_id}"),
                   seen=(Seen(READ, note_id, s, e, part),))


def run_tool(name: str, args: Any, notes: Mapping[str, str]) -> Outcome:
    """One tool call; a wrong name or input is an error result, never an exception."""
    if not isinstance(args, dict):
        return error("input must be an object")
    if name == LIST:
        return list_notes(notes, args.get("from_index", 0))
    if name == SEARCH:
        return search_notes(notes, args.get("pattern"))
    if name == READ:
        return read_note(notes, args.get("note_id"), args.get("start", 0), args.get("end"))
    return error(f"unknown tool {name[:40]!r}; the tools are {', '.join(NAMES)}")
