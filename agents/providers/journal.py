"""Paid answers in the LLM journal (:mod:`streams.journal`), replayed to an LLMSession.

One :class:`Recall` per input (judge job, debrief request): the answers paid for it so far,
by call index. :meth:`LLMSession.complete` asks it first: the ``i``-th call of an input whose
``i``-th answer is journaled, for a request of the same shape, gets that answer without a
request (``llm_calls{status="reused"}``); every new answer is journaled, and acknowledged,
before the session returns it. The call sequence of an input is a function of its answers,
so the same calls come in the same order; the shape check (:func:`signature`: turns,
max_tokens, tools, output schema; never text, which carries a fresh data-boundary token per
request) stops a reuse when the flow diverged (the skill or the notes changed): from there
on nothing is reused.

Calls in flight: before a request leaves, the entry records it as ``sent`` (acknowledged
too); its answer, or an error answer (not billed), clears the mark. The Messages API has no
idempotency key, so a call whose answer was lost (the worker killed, a timeout or a cut
connection) cannot be claimed back; the worker that sends it again finds the mark
(:meth:`Recall.lost`) and counts the call as possibly paid twice. That is the whole cost of
a kill: one call per input in flight, at most ``llm.concurrency`` per worker.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from typing import Any

import orjson

from agents.providers.base import LLMRequest, LLMResponse, TokenUsage, ToolCall
from streams.journal import Journal
from streams.runner import Output

log = logging.getLogger(__name__)
VERSION = 1


def journal_key(worker: str, result_id: str) -> str:
    """``<worker>|<result id>``: the result id derives from the input id and the version."""
    return f"{worker}|{result_id}"


def signature(request: LLMRequest) -> str:
    """The request's shape without its text."""
    shape = [[m.get("role") for m in request.messages], request.max_tokens,
             sorted(t.get("name", "") for t in request.tools), request.output_schema is not None,
             request.tool_choice]
    return hashlib.sha256(orjson.dumps(shape)).hexdigest()[:16]


def encode_response(r: LLMResponse) -> dict[str, Any]:
    return {"text": r.text, "tool_calls": [dataclasses.asdict(c) for c in r.tool_calls],
            "stop_reason": r.stop_reason, "usage": dataclasses.asdict(r.usage),
            "model": r.model, "latency_ms": r.latency_ms, "attempts": r.attempts,
            "content": list(r.content), "batch": r.batch}


def decode_response(d: dict[str, Any]) -> LLMResponse:
    return LLMResponse(text=d["text"], tool_calls=tuple(ToolCall(**c) for c in d["tool_calls"]),
                       stop_reason=d["stop_reason"], usage=TokenUsage(**d["usage"]),
                       model=d["model"], latency_ms=d["latency_ms"], attempts=d["attempts"],
                       content=tuple(d["content"]), batch=d["batch"])


class Recall:
    def __init__(self, journal: Journal, key: str) -> None:
        self.journal, self.key = journal, key
        self.answers: list[dict[str, Any]] | None = None  # loaded on the first call
        #: the call sent and not answered yet, as the entry says: ``{"call", "sig"}``
        self.sent: dict[str, Any] | None = None

    async def _load(self) -> list[dict[str, Any]]:
        if self.answers is None:
            await self.journal.sync()  # answers another worker paid before a rebalance
            raw = self.journal.get(self.key)
            data = orjson.loads(raw) if raw else {}
            ours = data.get("v") == VERSION
            self.answers = list(data.get("answers", [])) if ours else []
            self.sent = data.get("sent") if ours else None
        return self.answers

    async def _write(self) -> None:
        value: dict[str, Any] = {"v": VERSION, "answers": self.answers or []}
        if self.sent is not None:
            value["sent"] = self.sent
        await self.journal.put(self.key, orjson.dumps(value))

    async def lost(self, index: int, request: LLMRequest) -> bool:
        """Whether call ``index`` (this request's shape) was sent before and its answer
        never journaled: a worker killed with it in flight, or a timeout."""
        answers = await self._load()
        sent = self.sent
        return (sent is not None and sent.get("call") == index and index >= len(answers)
                and sent.get("sig") == signature(request))

    async def sending(self, index: int, request: LLMRequest) -> None:
        """Mark call ``index`` as sent; returns once the broker acknowledged the mark."""
        answers = await self._load()
        del answers[index:]
        self.sent = {"call": index, "sig": signature(request)}
        await self._write()

    async def refused(self, index: int) -> None:
        """Call ``index`` got an error answer (not billed): its mark goes."""
        if self.sent is not None and self.sent.get("call") == index:
            self.sent = None
            await self._write()

    async def reuse(self, index: int, request: LLMRequest) -> LLMResponse | None:
        answers = await self._load()
        if index >= len(answers):
            return None
        if answers[index]["sig"] != signature(request):
            log.info("llm journal %s: call %d differs from the journaled one; paying anew",
                     self.key.split("|", 1)[0], index + 1)
            del answers[index:]
            return None
        return decode_response(answers[index]["response"])

    async def keep(self, index: int, request: LLMRequest, response: LLMResponse) -> None:
        answers = await self._load()
        del answers[index:]
        answers.append({"sig": signature(request), "response": encode_response(response)})
        self.sent = None
        await self._write()


def tombstone(journal: Journal | None, key: str) -> list[Output]:
    """The output that drops ``key`` from the journal once the result is acknowledged
    (sent after the other outputs: :attr:`streams.runner.Output.last`); none if absent."""
    if journal is None or not journal.has(key):
        return []
    return [Output(journal.topic, key.encode(), None, last=True)]
