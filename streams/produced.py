"""What an output topic already holds: its ids (an input is not paid for twice), its series.

Kafka is the only durable state, so the guard is rebuilt from the output topic itself: on
start a worker reads the topic from the beginning to its end offsets (before consuming any
input, :meth:`ProducedIds.load`) and remembers every output id. While it runs it adds the ids
it produces. Output ids derive from the input and the prompt version (a judge result from
job and version, a case evaluation from request and version, a calibration record from its
group and figures), so an input redelivered after a crash (its output published, its offset
not yet committed) or replayed under the same version is recognised and skipped; a new
prompt version is produced again. Two deliveries of one input in flight at once collapse
too: the second waits for the first (:meth:`ProducedIds.claim`) and then emits nothing, and
a failed attempt leaves the id free for the next delivery.

A results topic is also a *result series* per prompt version (:class:`Series`, rebuilt by
:func:`scan_series`): per input (job id / request id) the latest result of every version, so
a new result can name the one it supersedes. A dashboard tells series apart by the same
fields, which are also Kafka headers (:func:`result_headers`); replays read them too.

Limits: the start-up scan is linear in the size of the topic (ids only are kept); an output
published by *another* replica after this replica's scan is not seen (possible only around a
rebalance), and consumers de-duplicate by id anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from streams.kafka_clients import KafkaTarget
from streams.topics import ids_on_topic, read_to_end

log = logging.getLogger(__name__)

#: Kafka header names every LLM result carries (judge and debrief alike).
RESULT_ID, PROMPT_VERSION, SUPERSEDES = "result_id", "prompt_version", "supersedes"


@dataclass
class Series:
    ids: set[str] = field(default_factory=set)
    #: input id -> {prompt version: latest result id}, versions in order of appearance
    by_input: dict[str, dict[str, str]] = field(default_factory=dict)
    #: prompt version -> results published under it
    counts: dict[str, int] = field(default_factory=dict)
    #: prompt version -> [output tokens, LLM calls] summed over its results
    output_tokens: dict[str, list[int]] = field(default_factory=dict)

    def add(self, input_id: str, version: str, rid: str,
            usage: dict[str, Any] | None = None) -> None:
        self.ids.add(rid)
        versions = self.by_input.setdefault(input_id, {})
        versions.pop(version, None)  # re-inserted last: the latest
        versions[version] = rid
        self.counts[version] = self.counts.get(version, 0) + 1
        if usage:
            acc = self.output_tokens.setdefault(version, [0, 0])
            acc[0] += int(usage.get("output_tokens") or 0)
            acc[1] += int(usage.get("llm_calls") or 0)

    def supersedes(self, input_id: str, version: str) -> str | None:
        """The latest result for ``input_id`` under another version (None: first result)."""
        others = [rid for v, rid in self.by_input.get(input_id, {}).items() if v != version]
        return others[-1] if others else None


async def scan_series(kafka: KafkaTarget, topic: str, id_field: str, input_field: str,
                      timeout: float = 120.0) -> Series:
    series = Series()
    async for rec in read_to_end(kafka, [topic], timeout):
        try:
            data = orjson.loads(rec.value or b"")
        except orjson.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        rid, inp, ver = data.get(id_field), data.get(input_field), data.get("prompt_version")
        if isinstance(rid, str) and isinstance(inp, str) and isinstance(ver, str):
            usage = data.get("usage")
            series.add(inp, ver, rid, usage if isinstance(usage, dict) else None)
    return series


def result_headers(rid: str, version: str, input_header: str, input_id: str,
                   supersedes: str | None) -> tuple[tuple[str, bytes], ...]:
    out = [(RESULT_ID, rid), (PROMPT_VERSION, version), (input_header, input_id)]
    if supersedes:
        out.append((SUPERSEDES, supersedes))
    return tuple((k, v.encode()) for k, v in out)


class ProducedIds:
    def __init__(self, ids: Iterable[str] = (), series: Series | None = None) -> None:
        self.ids: set[str] = set(ids)
        #: what the topic held at start, per input and prompt version (for ``supersedes``)
        self.series = series or Series()
        self._in_flight: dict[str, asyncio.Event] = {}

    def __contains__(self, rid: str) -> bool:
        return rid in self.ids

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, rid: str) -> None:
        self.ids.add(rid)

    @contextlib.asynccontextmanager
    async def claim(self, rid: str) -> AsyncIterator[bool]:
        """Yields True when the caller should produce ``rid`` (it then counts as produced
        when the block exits without error), False when it exists or was just produced."""
        while (pending := self._in_flight.get(rid)) is not None:
            await pending.wait()
        if rid in self.ids:
            yield False
            return
        done = self._in_flight[rid] = asyncio.Event()
        try:
            yield True
            self.ids.add(rid)
        finally:
            del self._in_flight[rid]
            done.set()

    async def load(self, kafka: KafkaTarget, topic: str, id_field: str,
                   input_field: str | None = None, timeout: float = 120.0) -> int:
        """Remember every ``id_field`` on ``topic``; returns how many were found. With an
        ``input_field`` the topic is a result series (:class:`Series`) and
        :attr:`series` is rebuilt from it too."""
        if input_field is None:
            found = await ids_on_topic(kafka, topic, id_field, timeout)
        else:
            self.series = await scan_series(kafka, topic, id_field, input_field, timeout)
            found = self.series.ids
        self.ids |= found
        log.info("%d existing %s(s) on %s", len(found), id_field, topic)
        return len(found)

    @classmethod
    async def from_topic(cls, kafka: KafkaTarget, topic: str, id_field: str,
                         input_field: str | None = None,
                         timeout: float = 120.0) -> ProducedIds:
        produced = cls()
        await produced.load(kafka, topic, id_field, input_field, timeout)
        return produced
