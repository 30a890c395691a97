"""The chart store: ``<charts dir>/<patient_id>/<note_id>.txt``, read-only.

Ids come from events, so every path is built with :func:`schemas.skill.safe_child`; a
patient or note id that could escape the charts folder is refused (treated as absent).

A patient's notes are cached (up to ``cache_size`` patients and ``cache_chars`` characters
in all, least recently used first out) and re-read when the folder's listing or any note's
size or modification time changes, so one stat per note replaces path resolution and
reading for every cell of the same patient: a chart of hundreds of notes is read once, not
per cell, and a worker's memory stays bounded however large the charts.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from pathlib import Path

from schemas.base import check_safe_id
from schemas.skill import SkillError, safe_child

log = logging.getLogger(__name__)


Signature = tuple[tuple[str, int, int], ...]


class ChartStore:
    def __init__(self, root: Path, cache_size: int = 256,
                 cache_chars: int = 64_000_000) -> None:
        self.root = root.resolve()
        self.cache_size, self.cache_chars = cache_size, cache_chars
        self._chars = 0  # characters held by the cache
        self._cache: OrderedDict[str, tuple[Signature, dict[str, str]]] = OrderedDict()

    def _patient_dir(self, patient_id: str) -> Path | None:
        try:
            path = safe_child(self.root, patient_id)
        except (SkillError, ValueError):
            log.warning("refused an unsafe patient id")
            return None
        return path if path.is_dir() else None

    def note_ids(self, patient_id: str) -> list[str]:
        folder = self._patient_dir(patient_id)
        if folder is None:
            return []
        ids = []
        for path in sorted(folder.glob("*.txt")):
            try:
                ids.append(check_safe_id(path.stem))
            except ValueError:
                continue  # a file whose name is not a valid note id is not a note
        return ids

    def note(self, patient_id: str, note_id: str) -> str | None:
        folder = self._patient_dir(patient_id)
        if folder is None:
            return None
        try:
            path = safe_child(folder, note_id, suffix=".txt")
        except (SkillError, ValueError):
            return None
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    def _signature(self, folder: Path) -> Signature:
        sig = []
        for path in sorted(folder.glob("*.txt")):
            st = path.stat()
            sig.append((path.name, st.st_mtime_ns, st.st_size))
        return tuple(sig)

    def notes(self, patient_id: str) -> dict[str, str]:
        """Every note of a patient by note id (empty when the patient has no folder)."""
        folder = self._patient_dir(patient_id)
        if folder is None:
            return {}
        sig = self._signature(folder)
        cached = self._cache.get(patient_id)
        if cached is not None and cached[0] == sig:
            self._cache.move_to_end(patient_id)
            return cached[1]
        out = {}
        for note_id in self.note_ids(patient_id):
            text = self.note(patient_id, note_id)
            if text is not None:
                out[note_id] = text
        old = self._cache.pop(patient_id, None)
        if old is not None:
            self._chars -= _size(old[1])
        self._cache[patient_id] = (sig, out)
        self._chars += _size(out)
        # the patient just read stays even when it alone passes the cap (its cell needs it)
        while len(self._cache) > 1 and (len(self._cache) > self.cache_size
                                        or self._chars > self.cache_chars):
            self._chars -= _size(self._cache.popitem(last=False)[1][1])
        return out


def _size(notes: dict[str, str]) -> int:
    return sum(len(t) for t in notes.values())
