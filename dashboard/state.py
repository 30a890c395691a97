"""What one page server holds: the window, the decisions, the pages' hub, its configuration."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from agents.context.charts import ChartStore
from dashboard.audit import Claims
from dashboard.decided import Decisions
from dashboard.feed import FeedStatus, Hub
from dashboard.limits import Guard, Limits
from dashboard.sessions import Access
from dashboard.window import Window
from dashboard.writer import Writer
from schemas.skill import AnswerSchema, Criterion


@dataclass
class State:
    window: Window
    charts: ChartStore
    hub: Hub
    feed: FeedStatus
    decisions: Decisions = field(default_factory=Decisions)
    access: Access = field(default_factory=Access)
    limits: Limits = field(default_factory=Limits)
    writer: Writer | None = None
    #: the access audit trail's writer (dashboard.access_audit); None: no patient text is served
    audit_trail: Writer | None = None
    criteria: dict[str, Criterion] = field(default_factory=dict)
    edge_cases: dict[str, str] = field(default_factory=dict)
    reviewer_key: bytes = b""
    allowed_hosts: frozenset[str] = frozenset({"localhost", "127.0.0.1", "::1"})
    guard: Guard | None = None
    #: who holds which cell while reviewing it (in memory: claims expire anyway)
    claims: Claims = field(default_factory=Claims)
    #: below this many adjudicated cells the calibration view says "not enough cells"
    min_cells: int = 30
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    def answer_schema(self, field_id: str) -> AnswerSchema | None:
        criterion = self.criteria.get(field_id)
        return criterion.answer_schema if criterion else None

    def criterion_view(self, field_id: str) -> dict[str, Any] | None:
        """What the validate form shows of a criterion (None: not in the skill)."""
        criterion = self.criteria.get(field_id)
        if criterion is None:
            return None
        return {"question": criterion.prompt,
                "answer_schema": criterion.answer_schema.model_dump(mode="json"),
                "gate": criterion.gate.model_dump(mode="json") if criterion.gate else None,
                "definition": criterion.body,
                "edge_cases": [{"name": name, "text": self.edge_cases.get(name, "")}
                               for name in criterion.uses.edge_cases]}

    @contextlib.asynccontextmanager
    async def cell_lock(self, cell: str) -> AsyncIterator[None]:
        # one small lock per cell ever saved here (kept: dropping one while a waiter is
        # being woken would let a third save run beside it)
        async with self._locks.setdefault(cell, asyncio.Lock()):
            yield

    def record(self, adjudication: dict[str, Any]) -> None:
        """An adjudication seen (written here or read from the topic): every page is told."""
        cell = self.decisions.add(adjudication)
        if cell is not None:
            self.hub.publish("decided", {
                "cell": cell, "result_id": adjudication.get("result_id"),
                "adjudication_id": adjudication.get("adjudication_id"),
                "adjudicator": adjudication.get("adjudicator")})


STATE = web.AppKey("state", State)


def json_response(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status,
                        content_type="application/json")
