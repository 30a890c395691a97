"""``judgeflow produce TOPIC FILE.jsonl``: validate and send records, report sent/rejected."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer
from pydantic import ValidationError

from schemas.errors import describe
from schemas.registry import CONTRACTS, TopicContract
from streams.settings import Settings
from streams.topics import ensure_topics


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "produce", help="validate a JSONL file against TOPIC's schema and send it",
        description="Each line is validated against the schema of TOPIC (AgentAnswer for "
        "chart-review.agent-answers.v1, ...) and sent keyed per the contract (cell key or "
        "request_id). Invalid lines are reported by line number and not sent. Exit status 1 "
        "if any line was rejected.")
    p.add_argument("topic", help="topic name, e.g. chart-review.agent-answers.v1")
    p.add_argument("file", type=Path, help="JSON Lines file ('-' for stdin)")
    p.add_argument("--raw", action="store_true",
                   help="send lines as they are, without validation (for dead-letter tests)")
    p.set_defaults(func=run)


def contract_for(topic: str, settings: Settings) -> TopicContract | None:
    for attr, name in settings.topics.model_dump().items():
        if name == topic and attr in CONTRACTS:
            return CONTRACTS[attr]
    return None


def prepare(line: bytes, contract: TopicContract | None) -> tuple[bytes | None, bytes]:
    """Validate one line; returns (key, value bytes). Raises ValueError with a safe message."""
    if contract is None:
        return None, line
    try:
        data: Any = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg})") from None
    try:
        rec = contract.model.model_validate(data)
    except ValidationError as exc:
        raise ValueError(describe(exc)) from None
    return contract.key(rec).encode(), orjson.dumps(rec.model_dump(mode="json"))


async def produce(settings: Settings, topic: str, lines: list[bytes], raw: bool) -> tuple[int, int]:
    contract = None if raw else contract_for(topic, settings)
    if contract is None and not raw:
        print(f"judgeflow: no schema known for topic {topic!r}; sending without validation",
              file=sys.stderr)
    await ensure_topics(settings, extra=[topic])
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka.bootstrap_servers,
                                acks="all", enable_idempotence=True, linger_ms=5)
    await producer.start()
    sent = rejected = 0
    futures = []
    try:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                key, value = prepare(line, contract)
            except ValueError as exc:
                rejected += 1
                print(f"line {number}: rejected: {exc}", file=sys.stderr)
                continue
            futures.append(await producer.send(topic, value=value, key=key))
            sent += 1
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return sent, rejected


def run(args: argparse.Namespace, settings: Settings) -> int:
    data = sys.stdin.buffer.read() if str(args.file) == "-" else args.file.read_bytes()
    sent, rejected = asyncio.run(produce(settings, args.topic, data.splitlines(), args.raw))
    print(f"{args.topic}: sent {sent}, rejected {rejected}")
    return 1 if rejected else 0
