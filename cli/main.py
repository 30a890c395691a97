"""``judgeflow`` entry point: parse arguments, read Settings once, dispatch."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from aiokafka.errors import KafkaConnectionError, KafkaError
from pydantic import ValidationError

from cli.logs import setup_logging
from schemas.errors import describe
from schemas.skill import SkillError
from streams.errors import StreamsError
from streams.kafka_access import explain
from streams.settings import Settings
from streams.worker_main import ExitCode

#: Subcommand modules; each has ``add_parser(subparsers)`` that sets ``func(args, settings)``.
COMMANDS = ("demo", "broker", "worker", "produce", "tail", "compare", "replay", "schemas",
            "bench", "config", "skill", "llm", "dashboard", "kafka")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="judgeflow",
        description="Kafka stream processor that triages clinical LLM reviews. Configuration "
        "comes from JUDGEFLOW_* environment variables (see docs/configuration.md).",
    )
    parser.add_argument("--bootstrap-servers", metavar="HOST:PORT[,...]",
                        help="Kafka bootstrap servers "
                        "(default: $JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS)")
    parser.add_argument("--log-level", default=None, help="DEBUG, INFO, WARNING (default INFO)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"cli.{name}").add_parser(sub)
    return parser


def load_settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, object] = {}
    base = Settings()
    if args.bootstrap_servers:
        overrides["kafka"] = base.kafka.model_copy(
            update={"bootstrap_servers": args.bootstrap_servers})
    if args.log_level:
        overrides["log_level"] = args.log_level.upper()
    return base.model_copy(update=overrides) if overrides else base


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = load_settings(args)
    except ValidationError as exc:
        print(f"judgeflow: invalid configuration: {describe(exc)}", file=sys.stderr)
        return ExitCode.CANNOT_START
    setup_logging(args.command, settings.log_level, explicit=bool(args.log_level))
    try:
        return int(args.func(args, settings) or 0)
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`judgeflow tail ... | head`): stop quietly, as Unix tools do;
        # stdout is pointed at /dev/null so the interpreter's final flush cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except StreamsError as exc:
        print(f"judgeflow: {exc}", file=sys.stderr)
        return ExitCode.FAILURE
    except SkillError as exc:  # a missing, empty or wholly unusable skill folder
        print(f"judgeflow: {exc}", file=sys.stderr)
        return ExitCode.CANNOT_START
    except KafkaConnectionError:
        print(f"judgeflow: cannot reach Kafka at {settings.kafka.bootstrap_servers} "
              "(set JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS or --bootstrap-servers)", file=sys.stderr)
        return ExitCode.FAILURE
    except KafkaError as exc:  # a denied ACL names the topic or group and the fix
        print(f"judgeflow: {explain(exc, settings.kafka)}", file=sys.stderr)
        return ExitCode.FAILURE


if __name__ == "__main__":
    sys.exit(main())
