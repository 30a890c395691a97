"""Every paid call of a replay counts against ``--budget-usd``, also the calls of a record
that ends in a dead letter (an answer still invalid after its repair round-trip): the
LLM session, the one accounting path, adds each price to the record's tally."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka import TopicPartition

from agents.providers.base import LLMRequest, LLMResponse, TokenUsage
from agents.providers.factory import cost_usd
from agents.providers.session import LLMSession
from agents.replay.driver import Replay, Target
from agents.replay.plan import Plan
from agents.settings import Settings
from streams.errors import BadRecord
from streams.metrics import Metrics
from streams.runner import Deferred

USAGE = TokenUsage(input_tokens=40_000, output_tokens=2_000)
MODEL = "claude-sonnet-5-5"


class Paid:
    name, model = "anthropic", MODEL

    async def complete(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse(text="not json", tool_calls=(), stop_reason="end_turn",
                           usage=USAGE, model=MODEL, latency_ms=1)


class Reserve:
    """Reserves a fixed figure per job (the estimator's interface)."""

    def __init__(self, usd: float) -> None:
        self.per, self.est = usd, SimpleNamespace(usd=0.0)

    async def add(self, request: Any, pricing: Any = None) -> None:
        self.est.usd += self.per


def _replay(budget: float, reserve: float) -> Replay:
    settings = Settings()

    async def handler(rec: Any) -> list[Any]:  # a call, a repair, still invalid
        session = LLMSession(Paid(), settings.llm, None, "judge")  # as judge and debrief do
        await session.complete(LLMRequest(system=(), messages=(), max_tokens=10))
        await session.complete(LLMRequest(system=(), messages=(), max_tokens=10))
        raise BadRecord("invalid_output", "after one repair round-trip: not JSON")

    target = Target(worker="judge", version="judge-v3+x", input_topic="jobs",
                    output_topic="results", handler=handler, decode=lambda v: v,
                    result_id=lambda item: str(item), published=lambda rid: False,
                    first_request=lambda item: None)
    tp = TopicPartition("jobs", 0)
    plan = Plan(group="g", starts={tp: 0}, ends={tp: 10})
    return Replay(settings, target, plan, metrics=Metrics.create(), budget_usd=budget,
                  estimator=Reserve(reserve))  # type: ignore[arg-type]


async def test_failed_records_are_paid_for_and_stop_the_budget() -> None:
    settings = Settings()
    one = 2 * cost_usd(USAGE, MODEL, settings.llm)  # the call and its repair
    run = _replay(budget=2.5 * one, reserve=one)
    for offset in range(2):
        with pytest.raises(BadRecord):
            await asyncio.create_task(run._handle(SimpleNamespace(
                topic="jobs", partition=0, offset=offset, value=b"job")))
    assert run.tally.failed == 2 and run.tally.usd == pytest.approx(2 * one)
    with pytest.raises(Deferred):  # the third record would pass the budget
        await run._handle(SimpleNamespace(topic="jobs", partition=0, offset=2, value=b"j"))
    assert run.tally.stopped_by == "budget" and run.tally.usd > 0
