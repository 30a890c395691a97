"""``judgeflow`` entry point: parse arguments, read Settings once, dispatch."""

from __future__ import annotations

import argparse
import os
import sys

from agents.replay import cli as replay_cli
from agents.settings import Settings
from cli import (
    audit,
    bench,
    broker,
    compare,
    config,
    dashboard,
    demo,
    export,
    kafka,
    llm,
    produce,
    schemas,
    skill,
    tail,
    worker,
)
from cli.env_names import deprecated, unknown
from cli.errors import exit_status
from cli.logs import setup_logging
from cli.parser import Parser
from streams import argtypes
from streams.exit_codes import CommandError, ExitCode
from streams.kafka_settings import KafkaSettings
from streams.settings import LOG_LEVELS
from streams.tracing import setup_tracing

#: Subcommand modules; each has ``add_parser(subparsers)`` that sets ``func(args, settings)``.
#: A feature with a command of its own keeps it in its package (``agents.replay.cli``).
COMMANDS = (demo, broker, worker, produce, tail, compare, export, replay_cli, schemas, bench,
            config, skill, llm, dashboard, kafka, audit)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="judgeflow",
        description="Kafka stream processor that triages clinical LLM reviews. Configuration "
        "comes from JUDGEFLOW_* environment variables (see docs/configuration.md).",
    )
    parser.add_argument("--bootstrap-servers", metavar="HOST:PORT[,...]",
                        type=argtypes.bootstrap_servers,
                        help="Kafka bootstrap servers "
                        "(default: $JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS)")
    parser.add_argument("--log-level", default=None, type=str.upper, choices=LOG_LEVELS,
                        metavar="LEVEL", help=f"{', '.join(LOG_LEVELS)} (default INFO)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def load_settings(args: argparse.Namespace) -> Settings:
    """Settings from the environment and the global options; an unknown JUDGEFLOW_* name
    stops here (a typo would otherwise leave the default in place without a word)."""
    typos = unknown(os.environ)
    if typos:
        raise CommandError(f"unknown setting{'s' if len(typos) > 1 else ''}: "
                           f"{'; '.join(typos)} (see `judgeflow config`)")
    for warning in deprecated(os.environ):
        print(f"judgeflow: warning: {warning}", file=sys.stderr)
    overrides: dict[str, object] = {}
    base = Settings()
    if args.bootstrap_servers is not None:  # checked by its argparse type
        overrides["kafka"] = base.kafka.model_copy(
            update={"bootstrap_servers": args.bootstrap_servers})
    if args.log_level:
        overrides["log_level"] = args.log_level
    return base.model_copy(update=overrides) if overrides else base


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)  # a usage mistake exits 2 with one line
    servers: str | KafkaSettings = args.bootstrap_servers or os.environ.get(
        "JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS", "the default 127.0.0.1:9092")
    try:
        settings = load_settings(args)
        servers = settings.kafka  # an ACL or login refusal is explained with its settings
        setup_logging(args.command, settings.log_level, explicit=bool(args.log_level),
                      fmt=settings.log_format)
        setup_tracing(args.command)  # only with OTEL_EXPORTER_OTLP_ENDPOINT set
        return int(args.func(args, settings) or ExitCode.OK)
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        # the reader went away (`judgeflow tail ... | head`): stop quietly, as Unix tools do;
        # stdout is pointed at /dev/null so the interpreter's final flush cannot fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except Exception as exc:
        status = exit_status(exc, servers)
        if status is None:
            raise  # a bug, not a mistake: the traceback is what a report needs
        code, line = status
        print(f"judgeflow: {line}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
