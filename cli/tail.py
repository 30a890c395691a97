"""``judgeflow tail TOPIC``: print a topic's records as JSON lines."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import orjson

from streams import event_loop, kafka_clients
from streams.argtypes import positive_float, positive_int
from streams.exit_codes import CommandError, ExitCode
from streams.kafka_check import topic_denied
from streams.settings import Settings
from streams.topics import assign_all


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("tail", help="print a topic's records as JSON lines",
                       description="Print each record's value as one JSON line (values that are "
                       "not JSON are printed as JSON strings). Reads all partitions, commits "
                       "nothing. Follows until Ctrl-C unless --max or --idle-timeout stops it.")
    p.add_argument("topic")
    p.add_argument("--from-beginning", action="store_true", help="start at the earliest offset")
    p.add_argument("--max", type=positive_int, default=None, metavar="N",
                   help="stop after N records")
    p.add_argument("--idle-timeout", type=positive_float, default=None, metavar="S",
                   help="stop after S seconds without a new record")
    p.add_argument("--meta", action="store_true",
                   help="wrap each value with partition, offset, key and headers")
    p.set_defaults(func=run)


def render(rec: Any, meta: bool) -> bytes:
    try:
        value: Any = orjson.loads(rec.value) if rec.value is not None else None
    except orjson.JSONDecodeError:
        value = rec.value.decode("utf-8", "replace")
    if not meta:
        return orjson.dumps(value)
    return orjson.dumps({
        "topic": rec.topic, "partition": rec.partition, "offset": rec.offset,
        "key": rec.key.decode("utf-8", "replace") if rec.key is not None else None,
        "headers": {k: v.decode("utf-8", "replace") for k, v in rec.headers or ()},
        "value": value,
    })


async def tail(settings: Settings, topic: str, from_beginning: bool, limit: int | None,
               idle: float | None, meta: bool) -> int:
    consumer = kafka_clients.consumer(settings.kafka, enable_auto_commit=False, group_id=None)
    count = 0
    try:
        await consumer.start()
        tps = await assign_all(consumer, [topic])
        if not tps:  # absent from the metadata: missing, or hidden from this principal
            if await topic_denied(settings, topic):
                raise CommandError(f"not authorized to Describe/Read topic {topic!r} (see "
                                   "`judgeflow kafka check`)", ExitCode.FAILURE)
            raise CommandError(f"topic {topic!r} does not exist", ExitCode.FAILURE)
        if from_beginning:
            await consumer.seek_to_beginning(*tps)
        else:
            await consumer.seek_to_end(*tps)
        last = time.monotonic()
        out = sys.stdout.buffer
        while limit is None or count < limit:
            batch = await consumer.getmany(timeout_ms=200, max_records=500)
            records = [r for rs in batch.values() for r in rs]
            if not records:
                if idle is not None and time.monotonic() - last >= idle:
                    break
                continue
            last = time.monotonic()
            for rec in records[: None if limit is None else limit - count]:
                out.write(render(rec, meta) + b"\n")
                count += 1
            out.flush()
    finally:
        await consumer.stop()
    return ExitCode.OK


def run(args: argparse.Namespace, settings: Settings) -> int:
    return event_loop.run(tail(settings, args.topic, args.from_beginning, args.max,
                            args.idle_timeout, args.meta))
