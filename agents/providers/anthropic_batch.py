"""Message Batches on the provider seam (with ``anthropic.py`` the only modules importing
``anthropic``): submit first requests under custom ids, ask for the status, read results.

The batch-processing page's limits (:mod:`batch_limits`, cited there): a batch holds at
most 100,000 requests or 256 MB, whichever comes first (:func:`chunk` splits a submission
into as many batches as needed); a batch still processing after 24 hours expires (its
unanswered entries come back ``expired``); results stay downloadable for 29 days after
creation (:attr:`BatchStatus.results_gone`).

Each request's params are built exactly as a live call's (``AnthropicProvider.params``), so
the API validates a batched request the same way. Results come back as the same
:class:`LLMResponse` a live call gives (``batch=True``: priced with the batch discount);
an ``errored``, ``expired`` or ``canceled`` entry comes back as its kind, for re-queueing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import anthropic

from agents.providers import batch_limits
from agents.providers.anthropic_errors import classify
from agents.providers.anthropic_params import to_response
from agents.providers.base import LLMRequest, LLMResponse


def body_bytes(obj: Any) -> int:
    """The UTF-8 size of ``obj`` as the SDK sends it (compact JSON, non-ASCII unescaped)."""
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode())


@dataclass(frozen=True)
class BatchStatus:
    batch_id: str
    #: ``in_progress`` | ``canceling`` | ``ended``
    processing_status: str
    counts: dict[str, int]
    created_at: datetime | None = None
    archived: bool = False

    @property
    def ended(self) -> bool:
        return self.processing_status == "ended"

    def results_gone(self, now: datetime | None = None) -> bool:
        """Past the 29-day results window (or archived): the results cannot be read."""
        now = now or datetime.now(UTC)
        return self.archived or (self.created_at is not None
                                 and now - self.created_at >= batch_limits.RESULTS_WINDOW)


def chunk(requests: Sequence[dict[str, Any]], max_requests: int | None = None,
          max_bytes: int | None = None) -> list[list[dict[str, Any]]]:
    """Split batch requests, in order, into batches within the API's limits (pure; default:
    :mod:`batch_limits`, read at each call). The size of a batch is its create body's UTF-8
    JSON; a request larger than the limit on its own goes alone (the API then reports it)."""
    max_requests = max_requests or batch_limits.MAX_REQUESTS
    max_bytes = max_bytes or batch_limits.MAX_BYTES
    out: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = len('{"requests":[]}')
    for r in requests:
        n = body_bytes(r) + 1
        if current and (len(current) >= max_requests or size + n > max_bytes):
            out.append(current)
            current, size = [], len('{"requests":[]}')
        current.append(r)
        size += n
    if current:
        out.append(current)
    return out


@dataclass(frozen=True)
class BatchResult:
    custom_id: str
    #: ``succeeded`` | ``errored`` | ``expired`` | ``canceled``
    kind: str
    response: LLMResponse | None = None
    error: str = ""


async def submit(provider: Any, items: Sequence[tuple[str, LLMRequest]]
                 ) -> list[tuple[str, list[str]]]:
    """Submit ``items`` in as many batches as the limits need: ``[(batch id, custom ids)]``."""
    requests = [{"custom_id": cid, "params": provider.params(req)} for cid, req in items]
    out: list[tuple[str, list[str]]] = []
    for part in chunk(requests):
        try:
            batch = await provider.client.messages.batches.create(
                requests=part, timeout=provider.settings.deadline_seconds)
        except anthropic.AnthropicError as exc:
            raise classify(exc) from exc
        out.append((str(batch.id), [r["custom_id"] for r in part]))
    return out


async def status(provider: Any, batch_id: str) -> BatchStatus:
    try:
        batch = await provider.client.messages.batches.retrieve(
            batch_id, timeout=provider.settings.deadline_seconds)
    except anthropic.AnthropicError as exc:
        raise classify(exc) from exc
    counts = batch.request_counts.to_dict() if batch.request_counts is not None else {}
    created = batch.created_at
    if created is not None and created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return BatchStatus(batch.id, str(batch.processing_status), counts, created,
                       batch.archived_at is not None)


async def results(provider: Any, batch_id: str) -> list[BatchResult]:
    out: list[BatchResult] = []
    try:
        stream = await provider.client.messages.batches.results(
            batch_id, timeout=provider.settings.deadline_seconds)
        async for entry in stream:
            r = entry.result
            if r.type == "succeeded":
                resp = replace(to_response(r.message, 0, 1), batch=True)
                out.append(BatchResult(entry.custom_id, "succeeded", resp))
            else:
                err = getattr(getattr(getattr(r, "error", None), "error", None), "type", "")
                out.append(BatchResult(entry.custom_id, str(r.type), error=str(err or "")))
    except anthropic.AnthropicError as exc:
        raise classify(exc) from exc
    return out
