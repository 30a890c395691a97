"""The access audit trail: who saw which patient's text, when, from which session.

One :class:`AuditEvent` per view of patient text on the review page (a cell with its
excerpts and cited notes), per decision, per export and per sign-in, on the append-only
topic ``judgeflow.audit.v1`` (docs/contracts.md). It names the reviewer by pseudonym, the
patient by id and what was shown by note id and character span: never the text itself, so
the trail can be kept (and read by governance) for years without holding PHI beyond ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Literal

import orjson
from pydantic import Field

from schemas.base import BoundedId, Frozen, SafeId

AUDIT_SCHEMA_VERSION: Literal[1] = 1
Action = Literal["view_cell", "view_excerpt", "view_note", "decision", "export", "sign_in",
                 "sign_in_refused"]


class NoteSpan(Frozen):
    """A note shown (``spans`` empty: from its start, uncut) and the spans highlighted."""

    note_id: SafeId
    spans: tuple[tuple[int, int], ...] = ()


class AuditEvent(Frozen):
    schema_version: Literal[1] = AUDIT_SCHEMA_VERSION
    audit_id: BoundedId
    at: datetime
    action: Action
    #: ``rv-`` + 16 hex (dashboard.identity.pseudonym); None: signed in with the shared
    #: access token, no reviewer named
    reviewer: SafeId | None = None
    #: a keyed hash of the session cookie or bearer token (``ss-``/``tk-``): which sign-in
    #: the request came from, never the credential itself
    session: BoundedId
    #: the route template (``GET /api/cell/{rid}``), never the path with its ids
    route: BoundedId
    patient_ids: tuple[SafeId, ...] = ()
    result_id: BoundedId | None = None
    notes: tuple[NoteSpan, ...] = ()
    adjudication_id: BoundedId | None = None
    #: how many records an export held (exports only)
    records: int | None = Field(default=None, ge=0)

    @property
    def key(self) -> str:
        """Keyed by the first patient: one patient's trail is in order on one partition."""
        return self.patient_ids[0] if self.patient_ids else (self.reviewer or "-")

    def to_record(self) -> tuple[bytes, bytes]:
        """The Kafka key and value the trail stores (absent optional fields left out)."""
        return self.key.encode(), orjson.dumps(self.model_dump(mode="json", exclude_none=True))


def matches(event: AuditEvent, patient: str | None = None,
            reviewer: str | None = None) -> bool:
    return ((patient is None or patient in event.patient_ids)
            and (reviewer is None or event.reviewer == reviewer))


def who_saw(events: Iterable[AuditEvent]) -> dict[str, int]:
    """Reviewer pseudonym (or ``(access token)``) -> events, in first-seen order."""
    out: dict[str, int] = {}
    for e in events:
        name = e.reviewer or "(access token)"
        out[name] = out.get(name, 0) + 1
    return out


def spans_text(notes: Iterable[NoteSpan]) -> str:
    """``n-1[120:146],n-2`` (a note without spans was shown from its start)."""
    return ",".join(n.note_id + "".join(f"[{s}:{e}]" for s, e in n.spans) for n in notes)
