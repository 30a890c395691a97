"""``judgeflow kafka check|acls``: what the configured principal may do, and what each role
needs (the data in :mod:`streams.kafka_acls`)."""

from __future__ import annotations

import argparse
import asyncio

import yaml

from streams.exit_codes import CommandError, ExitCode
from streams.kafka_acls import ROLES, role_acls, strimzi_acls
from streams.kafka_check import check, shown_name
from streams.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("kafka", help="Kafka access: check the principal's ACLs, list the "
                       "ACLs each role needs", description="Least-privilege helpers. Roles: "
                       + ", ".join(ROLES) + " (reader: tail, compare, a read-only dashboard; "
                       "reviewer: the dashboard that saves reviewers' decisions; replay-judge, "
                       "replay-debrief, replay-dlq: `judgeflow replay`; producer: `judgeflow "
                       "produce`). A name ending in * is a prefix (prefixed ACL).")
    ksub = p.add_subparsers(dest="kafka_command", metavar="SUBCOMMAND", required=True)
    c = ksub.add_parser("check", help="what the configured principal can and cannot do on "
                        "the topics and groups a role needs",
                        description="One line per topic/group and operation: ok, MISSING or "
                        "unknown, as the broker reports it (nothing is read or written). Exit "
                        "status 1 when something needed is MISSING.")
    c.add_argument("--role", choices=ROLES, action="append",
                   help="role(s) to check (repeatable; default: all)")
    c.set_defaults(func=run_check)
    a = ksub.add_parser("acls", help="the ACLs each role needs (or as Strimzi KafkaUsers)",
                        description="Print the ACLs judgeflow's roles need, one per line, or "
                        "with --strimzi as Strimzi KafkaUser resources (authorization: simple).")
    a.add_argument("--role", choices=ROLES, action="append", help="default: all roles")
    a.add_argument("--strimzi", action="store_true", help="KafkaUser YAML documents")
    a.add_argument("--cluster", default="kafka", help="strimzi.io/cluster label (default kafka)")
    a.add_argument("--authentication", choices=("scram-sha-512", "tls"),
                   default="scram-sha-512", help="KafkaUser authentication type")
    a.set_defaults(func=run_acls)


def run_check(args: argparse.Namespace, settings: Settings) -> int:
    missing = 0
    for role in args.role or ROLES:
        for finding in asyncio.run(check(settings, role)):
            print(finding.line(role))
            missing += finding.state == "MISSING"
    if missing:  # a check that found problems: one line on stderr through the one map
        raise CommandError(f"{missing} needed ACL(s) missing", ExitCode.FAILURE)
    return ExitCode.OK


def user_name(role: str) -> str:
    return f"judgeflow-{role}"


def kafka_users(settings: Settings, roles: list[str], cluster: str,
                authentication: str) -> list[dict[str, object]]:
    """Strimzi ``KafkaUser`` resources, one per role, with exactly that role's ACLs."""
    return [{"apiVersion": "kafka.strimzi.io/v1beta2", "kind": "KafkaUser",
             "metadata": {"name": user_name(role), "labels": {"strimzi.io/cluster": cluster}},
             "spec": {"authentication": {"type": authentication},
                      "authorization": {"type": "simple",
                                        "acls": strimzi_acls(role, settings)}}}
            for role in roles]


def run_acls(args: argparse.Namespace, settings: Settings) -> int:
    roles = args.role or list(ROLES)
    if args.strimzi:
        docs = kafka_users(settings, roles, args.cluster, args.authentication)
        print(yaml.safe_dump_all(docs, sort_keys=False), end="")
        return ExitCode.OK
    for role in roles:
        for a in role_acls(role, settings):
            print(f"{role:<14} {a.resource:<5} {shown_name(a):<44} {a.operation:<9} {a.why}")
    return ExitCode.OK
