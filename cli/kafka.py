"""``judgeflow kafka check|acls``: what the configured principal may do, and what each role
needs (the data in :mod:`streams.kafka_acls`)."""

from __future__ import annotations

import argparse

import yaml

from cli.kafka_acls_commands import kafka_acls_commands
from streams import event_loop
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
    a = ksub.add_parser("acls", help="the ACLs each role needs (a table, Strimzi KafkaUsers "
                        "or kafka-acls.sh commands)",
                        description="Print the ACLs judgeflow's roles need: one per line "
                        "(--format table), as Strimzi KafkaUser resources (--format strimzi, "
                        "authorization: simple) or as kafka-acls.sh command lines that add "
                        "them (--format kafka-acls: Apache Kafka, Confluent Platform, Amazon "
                        "MSK with SCRAM or mutual TLS). All three come from the same list.")
    a.add_argument("--role", choices=ROLES, action="append", help="default: all roles")
    a.add_argument("--format", choices=FORMATS, default="table", help="default: table")
    a.add_argument("--strimzi", action="store_const", const="strimzi", dest="format",
                   help="the same as --format strimzi")
    a.add_argument("--principal", default="User:" + user_name("{role}"),
                   help="kafka-acls: each role's principal, {role} replaced (default "
                   "User:judgeflow-{role}, the SCRAM user name; mutual TLS: the certificate's "
                   "subject, e.g. 'User:CN=judgeflow-{role}')")
    a.add_argument("--command-config", default="admin.properties", metavar="FILE",
                   help="kafka-acls: the admin client's properties file the commands name "
                   "(default admin.properties)")
    a.add_argument("--cluster", default="kafka", help="strimzi.io/cluster label (default kafka)")
    a.add_argument("--authentication", choices=("scram-sha-512", "tls"),
                   default="scram-sha-512", help="KafkaUser authentication type")
    a.set_defaults(func=run_acls)


FORMATS = ("table", "strimzi", "kafka-acls")


def run_check(args: argparse.Namespace, settings: Settings) -> int:
    missing = 0
    for role in args.role or ROLES:
        for finding in event_loop.run(check(settings, role)):
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
    if args.format == "strimzi":
        docs = kafka_users(settings, roles, args.cluster, args.authentication)
        print(yaml.safe_dump_all(docs, sort_keys=False), end="")
        return ExitCode.OK
    if args.format == "kafka-acls":
        for line in kafka_acls_commands(settings, roles, args.principal, args.command_config):
            print(line)
        return ExitCode.OK
    for role in roles:
        for a in role_acls(role, settings):
            print(f"{role:<14} {a.resource:<5} {shown_name(a):<44} {a.operation:<9} {a.why}")
    return ExitCode.OK
