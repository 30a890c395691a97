"""Every adjudication the page server has seen (read from the topic or written here), per
cell, newest last: which cells are decided, who decided before. Pure."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from schemas.chart_review import cell_key
from schemas.ids import canonical_json, derive_id


def _when(value: Any) -> str:
    return value if isinstance(value, str) else ""


class Decisions:
    """Every adjudication seen (from the topic or written here), newest last per cell."""

    def __init__(self) -> None:
        self._by_cell: dict[str, list[dict[str, Any]]] = {}
        self._ids: set[str] = set()

    def add(self, value: Any) -> str | None:
        """Keep ``value``; returns its cell key, or None for a duplicate or a non-decision."""
        if not isinstance(value, dict):
            return None
        parts = [value.get(k) for k in ("task_id", "patient_id", "field_id")]
        if not all(isinstance(p, str) and p for p in parts):
            return None
        cell = cell_key(*parts)  # type: ignore[arg-type]
        aid = value.get("adjudication_id")
        if not isinstance(aid, str) or not aid:
            aid = derive_id("adjudication", canonical_json(value))  # written by another tool
            value = {**value, "adjudication_id": aid}
        if aid in self._ids:
            return None
        self._ids.add(aid)
        items = self._by_cell.setdefault(cell, [])
        items.append(value)
        items.sort(key=lambda v: _moment(v.get("adjudicated_at")))
        return cell

    def latest(self, cell: str) -> dict[str, Any] | None:
        items = self._by_cell.get(cell)
        return items[-1] if items else None

    def history(self, cell: str) -> list[dict[str, Any]]:
        """Newest first."""
        return list(reversed(self._by_cell.get(cell, ())))

    def decided(self, cell: str) -> bool:
        return cell in self._by_cell

    def __len__(self) -> int:
        return len(self._ids)


def _moment(value: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(_when(value).replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
