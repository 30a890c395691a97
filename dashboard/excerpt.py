"""The note excerpt around an evidence pointer, read through the judge's own chart store.

:class:`agents.context.charts.ChartStore` refuses ids that could escape the charts folder, so
the page can never be made to read a file outside it. The excerpt is returned as three plain
strings (before, highlighted, after); the browser renders them as text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.context.charts import ChartStore

CONTEXT_CHARS = 240


def _offsets(value: Any) -> tuple[int, int] | None:
    if (isinstance(value, list | tuple) and len(value) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        start, end = value
        return (start, end) if 0 <= start <= end else None
    return None


def cut(text: str, offsets: tuple[int, int] | None,
        context: int = CONTEXT_CHARS) -> dict[str, Any]:
    """Split ``text`` around ``offsets`` (clamped to the text); no offsets: the note's start."""
    if offsets is None or offsets[0] >= len(text):
        head = text[: 2 * context]
        return {"before": head, "highlight": "", "after": "", "found": False,
                "clipped_start": False, "clipped_end": len(text) > len(head)}
    start, end = offsets[0], min(offsets[1], len(text))
    lo, hi = max(0, start - context), min(len(text), end + context)
    return {"before": text[lo:start], "highlight": text[start:end], "after": text[end:hi],
            "found": True, "clipped_start": lo > 0, "clipped_end": hi < len(text)}


def evidence_excerpts(store: ChartStore, patient_id: str,
                      pointers: Any) -> list[dict[str, Any]]:
    """One excerpt per evidence pointer; a missing note or unsafe id gives ``note: None``."""
    out = []
    for pointer in pointers if isinstance(pointers, list | tuple) else ():
        if not isinstance(pointer, Mapping):
            continue
        note_id = pointer.get("note_id")
        offsets = _offsets(pointer.get("offsets"))
        text = (store.note(patient_id, note_id)
                if isinstance(note_id, str) and isinstance(patient_id, str) else None)
        out.append({
            "note_id": note_id if isinstance(note_id, str) else "",
            "what_to_look_for": str(pointer.get("what_to_look_for", "")),
            "offsets": list(offsets) if offsets else None,
            "note": None if text is None else cut(text, offsets),
        })
    return out


def segments(text: str, spans: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """``text`` cut into plain and highlighted runs (overlapping spans merged)."""
    out: list[dict[str, Any]] = []
    pos = 0
    for start, end in sorted((max(0, s), min(len(text), e)) for s, e in spans):
        if end <= pos or start >= len(text):
            continue
        start = max(start, pos)
        if start > pos:
            out.append({"text": text[pos:start], "mark": False})
        out.append({"text": text[start:end], "mark": True})
        pos = end
    if pos < len(text):
        out.append({"text": text[pos:], "mark": False})
    return out


def cited_notes(store: ChartStore, patient_id: str, pointers: Any) -> list[dict[str, Any]]:
    """Each note the judge cites, whole, with every cited span of it highlighted."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for pointer in pointers if isinstance(pointers, list | tuple) else ():
        if isinstance(pointer, Mapping) and isinstance(pointer.get("note_id"), str):
            offsets = _offsets(pointer.get("offsets"))
            spans.setdefault(pointer["note_id"], []).extend([offsets] if offsets else [])
    out = []
    for note_id, found in spans.items():
        text = store.note(patient_id, note_id) if isinstance(patient_id, str) else None
        out.append({"note_id": note_id,
                    "segments": None if text is None else segments(text, found)})
    return out
