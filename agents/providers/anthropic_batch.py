"""Message Batches on the provider seam (with ``anthropic.py`` the only modules importing
``anthropic``): submit first requests under custom ids, ask for the status, read results.

Each request's params are built exactly as a live call's (``AnthropicProvider.params``), so
the API validates a batched request the same way. Results come back as the same
:class:`LLMResponse` a live call gives (``batch=True``: priced with the batch discount);
an ``errored``, ``expired`` or ``canceled`` entry comes back as its kind, for re-queueing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import anthropic

from agents.providers.anthropic_errors import classify
from agents.providers.anthropic_params import to_response
from agents.providers.base import LLMRequest, LLMResponse


@dataclass(frozen=True)
class BatchStatus:
    batch_id: str
    #: ``in_progress`` | ``canceling`` | ``ended``
    processing_status: str
    counts: dict[str, int]

    @property
    def ended(self) -> bool:
        return self.processing_status == "ended"


@dataclass(frozen=True)
class BatchResult:
    custom_id: str
    #: ``succeeded`` | ``errored`` | ``expired`` | ``canceled``
    kind: str
    response: LLMResponse | None = None
    error: str = ""


async def submit(provider: Any, items: Sequence[tuple[str, LLMRequest]]) -> str:
    requests = [{"custom_id": cid, "params": provider.params(req)} for cid, req in items]
    try:
        batch = await provider.client.messages.batches.create(
            requests=requests, timeout=provider.settings.deadline_seconds)
    except anthropic.AnthropicError as exc:
        raise classify(exc) from exc
    return str(batch.id)


async def status(provider: Any, batch_id: str) -> BatchStatus:
    try:
        batch = await provider.client.messages.batches.retrieve(
            batch_id, timeout=provider.settings.deadline_seconds)
    except anthropic.AnthropicError as exc:
        raise classify(exc) from exc
    counts = batch.request_counts.to_dict() if batch.request_counts is not None else {}
    return BatchStatus(batch.id, str(batch.processing_status), counts)


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
