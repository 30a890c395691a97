"""What every model call of a replayed record cost, whatever became of the record.

The result's ``usage.cost_usd`` only exists when a result is published; a record that ends
in a dead letter (e.g. ``invalid_output`` after a call and a repair) was paid for all the
same. :class:`MeteredProvider` wraps the provider a replay target is built with and adds the
price of every answer to the :class:`Meter` of the record being handled (a context
variable: each record runs in its own task, so concurrent records never mix).
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import Any

from agents.providers.base import LLMRequest, LLMResponse
from agents.providers.factory import cost_usd
from streams.settings import LLMSettings


@dataclass
class Meter:
    usd: float = 0.0
    calls: int = 0


_METER: contextvars.ContextVar[Meter | None] = contextvars.ContextVar("replay_meter",
                                                                      default=None)


def start() -> Meter:
    """A fresh meter for the record handled by the current task."""
    meter = Meter()
    _METER.set(meter)
    return meter


class MeteredProvider:
    """The provider, with every answer's price added to the current record's meter."""

    def __init__(self, inner: Any, llm: LLMSettings) -> None:
        self.inner, self.llm, self.name, self.model = inner, llm, inner.name, inner.model

    async def complete(self, request: LLMRequest) -> LLMResponse:
        response: LLMResponse = await self.inner.complete(request)
        meter = _METER.get()
        if meter is not None:
            meter.calls += response.attempts
            meter.usd += cost_usd(response.usage, response.model, self.llm,
                                  batch=response.batch)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
