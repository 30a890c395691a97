"""``judgeflow worker calibrate``: judge results + adjudications -> calibration records.

Calibration is a function of whole topics, so the worker keeps no offsets: at start it reads
the judge results, the adjudications and the cell outcomes from the beginning (Kafka is the
only state), then follows them. Once caught up, and then at most every
``kafka.commit_interval_seconds``, it republishes each (task, criterion, prompt version)
whose figures changed. A record's ``calibration_id`` hashes its figures, and the ids already
on the calibration topic are read at start, so a restart publishes nothing twice. Dead
letters already written for an adjudication are read back too, so a restart does not
dead-letter it again. Run one replica (two would publish the same records twice, harmless).

No record stops the worker: an adjudication that breaks its contract, or on which the
worker itself fails (``internal_error``: a bug, the record kept for a replay), is
dead-lettered and the records after it are read on; a dead letter is counted and logged once
the broker has acknowledged it (a batch's letters were logged and then lost when a later
record of the batch raised).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Set
from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from agents.calibrate.core import Calibration, Group
from agents.calibrate.feed import Feeder
from schemas.dlq import DeadLetterHeaders
from schemas.skill import AnswerSchema, SkillError, load_skill
from streams import kafka_clients, tracing, worker_main
from streams.dlq import DeadLetter, dead_letter, note_dead_letter
from streams.errors import BadRecord
from streams.metrics import Metrics
from streams.produced import ProducedIds
from streams.settings import Settings
from streams.topics import assign_all, ensure_topics, read_to_end
from streams.worker_main import serve_until

log = logging.getLogger(__name__)
NAME = "calibrate"


class Letter(NamedTuple):
    """A dead letter to send and what it is counted and logged as once acknowledged."""

    rec: Any
    error_type: str
    letter: DeadLetter


def answer_schemas(settings: Settings) -> dict[str, AnswerSchema] | None:
    """The criteria's answer schemas, to compare answers by meaning (and to refuse
    adjudications of other criteria); None without a usable skill."""
    try:
        skill = load_skill(settings.skill_dir)
    except SkillError as exc:
        log.warning("calibrate: no usable skill (%s); answers compared by spelling, "
                    "criteria of adjudications not checked", exc)
        return None
    return {fid: c.answer_schema for fid, c in skill.criteria.items()}


async def dead_lettered(settings: Settings) -> set[tuple[int, int]]:
    """(partition, offset) of adjudications already in the DLQ."""
    seen: set[tuple[int, int]] = set()
    async for rec in read_to_end(settings.kafka,
                                 [settings.topics.dlq(settings.topics.adjudications)]):
        with contextlib.suppress(KeyError, ValueError):
            h = DeadLetterHeaders.from_kafka(rec.headers or ())
            if h.source_topic == settings.topics.adjudications:
                seen.add((h.source_partition, h.source_offset))
    return seen


class CalibrateWorker:
    def __init__(self, settings: Settings, metrics: Metrics, calibration: Calibration,
                 criteria: Set[str] | None = None) -> None:
        self.s = settings
        self.metrics = metrics
        self.cal = calibration
        self.feeder = Feeder(calibration, settings.topics, criteria)
        #: adjudications read while catching up, absorbed once every outcome and result
        #: before them was read (so their task is known whatever the topics' read order)
        self.held: list[Any] | None = []
        self.dirty: set[Group] = set()
        self.published = ProducedIds()
        self.dead: set[tuple[int, int]] = set()
        self.stop_event = asyncio.Event()
        self.producer: AIOKafkaProducer | None = None

    def stop(self) -> None:
        self.stop_event.set()

    def absorb(self, rec: Any) -> list[Letter]:
        """Feed one record; returns the dead letter to send, if any. Never raises for a
        record: what fails on one record is that record's dead letter (or, on the topics
        our own workers write, a skip)."""
        if self.held is not None and rec.topic == self.s.topics.adjudications:
            self.held.append(rec)
            return []
        self.metrics.records_in.labels(NAME, rec.topic).inc()
        try:
            self.dirty |= self.feeder.feed(rec)
            return []
        except BadRecord as exc:
            error_type, message = exc.error_type, exc.message
        except Exception as exc:  # a bug must not stop (and, re-reading, loop) the worker
            # type and place only: an exception's text may quote the record (PHI)
            log.error("calibrate failed on %s[%d]@%d: %s", rec.topic, rec.partition,
                      rec.offset, type(exc).__name__)
            log.debug("calibrate failure traceback", exc_info=True)
            if rec.topic != self.s.topics.adjudications:
                self.feeder.skipped += 1
                return []
            error_type, message = "internal_error", type(exc).__name__
        if (rec.partition, rec.offset) in self.dead:
            return []
        return [Letter(rec, error_type,
                       dead_letter(rec, error_type, message, self.s.topics.dlq(rec.topic)))]

    async def publish(self) -> int:
        """Send the changed groups' records; returns how many were new (the worker's step,
        traced: streams.tracing)."""
        with tracing.span("calibrate step", {"judgeflow.worker": NAME,
                                             "judgeflow.groups": len(self.dirty)}) as span:
            sent = await self._publish()
            if span is not None:
                span.set_attribute("judgeflow.published", sent)
            return sent

    async def _publish(self) -> int:
        assert self.producer is not None
        now, sent = datetime.now(UTC), []
        for group in sorted(self.dirty):
            rec = self.cal.record(group, now)
            if rec.calibration_id not in self.published:
                sent.append((rec, await self.producer.send(
                    self.s.topics.calibration, key=rec.key.encode(),
                    value=orjson.dumps(rec.model_dump(mode="json")))))
        for rec, fut in sent:
            await fut
            self.published.add(rec.calibration_id)
            self.metrics.records_out.labels(NAME, self.s.topics.calibration).inc()
        self.dirty.clear()
        return len(sent)

    async def run(self) -> None:
        k, t = self.s.kafka, self.s.topics
        # the jobs carry each agent's answer: agreement among any number of agents
        inputs = [t.judge_results, t.adjudications, t.cell_outcomes, t.judge_jobs]
        await self.published.load(k, t.calibration, "calibration_id")
        self.dead = await dead_lettered(self.s)
        self.producer = kafka_clients.producer(k, acks="all", enable_idempotence=True)
        consumer = kafka_clients.consumer(k, group_id=None, enable_auto_commit=False,
                                          auto_offset_reset="earliest")
        try:  # both stopped also when a start failed: no client left open
            await self.producer.start()
            await consumer.start()
            ends = await self._catch_up(consumer, inputs)
            log.info("calibrate: caught up on %d partition(s); %d group(s); published %d",
                     len(ends), len(self.cal.groups()), await self.publish())
            last = time.monotonic()
            while not self.stop_event.is_set():
                await self._poll(consumer)
                if self.dirty and time.monotonic() - last >= k.commit_interval_seconds:
                    await self.publish()
                    last = time.monotonic()
        finally:
            await consumer.stop()
            await self.producer.stop()

    async def _catch_up(self, consumer: AIOKafkaConsumer, inputs: list[str]) -> dict[Any, int]:
        tps = await assign_all(consumer, inputs, wait=5.0)
        await consumer.seek_to_beginning(*tps)
        ends: dict[Any, int] = await consumer.end_offsets(tps)
        while not self.stop_event.is_set():
            behind = [tp for tp in tps if await consumer.position(tp) < ends[tp]]
            if not behind:
                break
            await self._poll(consumer)
        held, self.held = self.held or [], None
        # With no decided cell at all yet (adjudications loaded before the pipeline ran),
        # held adjudications wait for their task; otherwise one naming no decided cell's
        # task is a typo and dead-lettered. From now on an unseen task may be on its way.
        self.feeder.live = not self.feeder.tasks
        await self._send([d for rec in held for d in self.absorb(rec)])
        self.feeder.live = True
        return ends

    async def _poll(self, consumer: AIOKafkaConsumer) -> None:
        assert self.producer is not None
        batch = await consumer.getmany(timeout_ms=200, max_records=1000)
        await self._send([d for rs in batch.values() for rec in rs for d in self.absorb(rec)])

    async def _send(self, letters: list[Letter]) -> None:
        """Send the dead letters; each is counted and logged once acknowledged."""
        assert self.producer is not None
        futures = [await self.producer.send(d.topic, key=d.key, value=d.value,
                                            headers=list(d.headers))
                   for _, _, d in letters]
        for (rec, error_type, _), fut in zip(letters, futures, strict=True):
            await fut
            self.dead.add((rec.partition, rec.offset))
            note_dead_letter(self.metrics, NAME, rec, error_type)


async def serve(settings: Settings, stop: asyncio.Event | None = None,
                metrics: Metrics | None = None) -> None:
    """Run the calibrate worker until ``stop`` is set (on SIGTERM/SIGINT: see run_worker)."""
    await ensure_topics(settings, role="calibrate")
    schemas = answer_schemas(settings)
    worker = CalibrateWorker(settings, metrics or Metrics.create(), Calibration(schemas or {}),
                             None if schemas is None else set(schemas))
    await serve_until(worker, stop)


def run_worker(settings: Settings) -> int:
    return worker_main.run_worker("calibrate", settings,
                                  lambda metrics, stop: serve(settings, stop, metrics))
