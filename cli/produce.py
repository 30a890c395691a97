"""``judgeflow produce TOPIC FILE.jsonl``: validate and send records, report sent/rejected."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from schemas.registry import CONTRACTS, TopicContract
from streams import event_loop, limits
from streams.decode import decode_record
from streams.errors import BadRecord
from streams.exit_codes import CommandError, ExitCode
from streams.kafka_acls import produce_acls
from streams.settings import Settings
from streams.topics import ensure_topics, send_all


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
    """Validate one line; returns (key, value bytes). Raises ValueError with a safe message.
    The consuming worker's own checks: :func:`streams.decode.decode_record` (size bound,
    JSON, duplicate keys, the model) then its free-text limits, so that nothing a worker
    would dead-letter for its contract is sent; the message starts with the dead-letter
    type it would get and quotes no value."""
    if contract is None:
        return None, line
    try:
        rec = decode_record(contract.model, line)
        if problems := limits.record_problems(rec):
            raise BadRecord("oversized", "; ".join(problems))
    except BadRecord as exc:
        raise ValueError(f"{exc.error_type}: {exc.message}") from None
    return contract.key(rec).encode(), orjson.dumps(rec.model_dump(mode="json"))


Record = tuple[bytes | None, bytes]  # (key, value)


def validate(lines: list[bytes], contract: TopicContract | None) -> tuple[list[Record], int]:
    """Validate every line before any connection; returns (records to send, rejected count)."""
    records: list[Record] = []
    rejected = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(prepare(line, contract))
        except ValueError as exc:
            rejected += 1
            print(f"line {number}: rejected: {exc}", file=sys.stderr)
    return records, rejected


async def send(settings: Settings, topic: str, records: list[Record]) -> int:
    """Check Write on TOPIC, create it if needed (where the principal may) and send
    already-validated records; returns how many. Only TOPIC: the producer role writes
    the topics it feeds and nothing else. Nothing to send (an empty file, every line
    rejected) connects to nothing and creates no topic."""
    if not records:
        return 0
    await ensure_topics(settings, role="producer", acls=produce_acls(topic))
    await send_all(settings.kafka, topic, records)
    return len(records)


async def produce(settings: Settings, topic: str, lines: list[bytes], raw: bool) -> tuple[int, int]:
    """Validate then send (the demo's and benches' entry point); returns (sent, rejected)."""
    records, rejected = validate(lines, None if raw else contract_for(topic, settings))
    return await send(settings, topic, records), rejected


def read_input(file: Path) -> bytes:
    """The file's bytes; a missing, directory or unreadable file is a one-line error."""
    if str(file) == "-":
        return sys.stdin.buffer.read()
    if file.is_dir():
        raise CommandError(f"{file} is a directory, not a JSON Lines file")
    try:
        return file.read_bytes()
    except FileNotFoundError:
        raise CommandError(f"{file}: no such file") from None
    except OSError as exc:
        raise CommandError(f"cannot read {file}: {exc.strerror}") from None


def run(args: argparse.Namespace, settings: Settings) -> int:
    contract = None if args.raw else contract_for(args.topic, settings)
    if contract is None and not args.raw:
        known = ", ".join(sorted(name for attr, name in settings.topics.model_dump().items()
                                 if attr in CONTRACTS))
        raise CommandError(f"no schema known for topic {args.topic!r} (known: {known}); "
                           "use --raw to send unvalidated")
    data = read_input(args.file)
    records, rejected = validate(data.splitlines(), contract)
    sent = event_loop.run(send(settings, args.topic, records))
    print(f"{args.topic}: sent {sent}, rejected {rejected}")
    return ExitCode.FAILURE if rejected else ExitCode.OK
