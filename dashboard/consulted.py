"""What the judge's chart tools showed it, for the review page (``consulted`` of a result).

Only ids, offsets, the search pattern and hit counts: never note text (the page already
shows the cited notes and the excerpts around pointers). A search is one row with the spans
of the windows it returned; a read one row; entries of any other shape (a result written by
another version) are skipped. Pure.
"""

from __future__ import annotations

from typing import Any

MAX_ROWS = 40


def _span(a: dict[str, Any]) -> list[int] | None:
    s, e = a.get("start"), a.get("end")
    return [s, e] if isinstance(s, int) and isinstance(e, int) else None


def consulted_view(raw: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for a in raw if isinstance(raw, list) else []:
        if not isinstance(a, dict):
            continue
        tool, note = a.get("tool"), a.get("note_id")
        if tool == "search_notes" and note is None:
            rows.append({"tool": tool, "pattern": str(a.get("pattern") or "")[:200],
                         "hits": a.get("hits") if isinstance(a.get("hits"), int) else None,
                         "windows": []})
        elif tool == "search_notes" and rows and rows[-1]["tool"] == tool:
            rows[-1]["windows"].append({"note_id": str(note), "span": _span(a)})
        elif tool == "read_note" and isinstance(note, str):
            rows.append({"tool": tool, "note_id": note, "span": _span(a)})
        elif tool == "list_notes":
            rows.append({"tool": tool})
    return rows[:MAX_ROWS]
