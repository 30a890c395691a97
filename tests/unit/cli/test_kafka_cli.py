"""``judgeflow kafka acls`` prints the ACL data (rows, or Strimzi KafkaUsers), and
``judgeflow broker`` tells a hand-started embedded broker's user what to set."""

from __future__ import annotations

from typing import NamedTuple

import pytest
import yaml

from cli.broker import embedded_hint
from cli.kafka import kafka_users
from cli.main import main
from streams.kafka_acls import ROLES, Acl, role_acls
from streams.settings import Settings


def test_acls_prints_one_row_per_acl(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kafka", "acls", "--role", "judge"]) == 0
    rows = capsys.readouterr().out.splitlines()
    want = role_acls("judge", Settings())
    assert len(rows) == len(want)
    for row, a in zip(rows, want, strict=True):
        assert row.split()[:4] == ["judge", a.resource, a.name, a.operation]


def test_strimzi_users_carry_exactly_each_roles_acls(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kafka", "acls", "--strimzi", "--authentication", "tls"]) == 0
    docs = list(yaml.safe_load_all(capsys.readouterr().out))
    assert docs == kafka_users(Settings(), list(ROLES), "kafka", "tls")
    by_user = {d["metadata"]["name"]: d for d in docs}
    judge = by_user["judgeflow-judge"]["spec"]
    assert judge["authentication"] == {"type": "tls"}
    granted = sorted((acl["resource"]["type"], acl["resource"]["name"], op)
                     for acl in judge["authorization"]["acls"] for op in acl["operations"])
    assert granted == sorted((a.resource, a.name, a.operation)
                             for a in role_acls("judge", Settings()))


def test_unknown_role_is_rejected_by_the_parser() -> None:
    with pytest.raises(SystemExit):
        main(["kafka", "check", "--role", "admin"])


def test_broker_prints_the_settings_to_use() -> None:
    hint = "\n".join(embedded_hint("127.0.0.1:5555"))
    assert "export JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS=127.0.0.1:5555" in hint
    assert "JUDGEFLOW_KAFKA__BROKER=embedded" in hint and "IDLE_FETCH_BACKOFF_MS" in hint


def parsed_kafka_acls(lines: list[str]) -> set[tuple[str, str, str, str, str]]:
    """(principal, resource, name, pattern type, operation) for each ACL the lines add."""
    import shlex

    added = set()
    for line in lines:
        words = shlex.split(line)
        assert words[0] == "kafka-acls.sh" and "--add" in words, line
        flags: dict[str, list[str]] = {}
        rest = [w for w in words[1:] if w != "--add"]
        for flag, value in zip(rest[::2], rest[1::2], strict=True):
            flags.setdefault(flag, []).append(value)
        (kind,) = [f[2:] for f in flags if f in ("--topic", "--group")]
        assert flags["--allow-host"] == ["*"]
        (principal,) = flags["--allow-principal"]
        (name,) = flags[f"--{kind}"]
        (pattern,) = flags["--resource-pattern-type"]
        added |= {(principal, kind, name, pattern, op) for op in flags["--operation"]}
    return added


def pattern(a: Acl) -> str:
    return getattr(a, "pattern", "literal")  # prefixed ACLs: a name prefix


def test_a_prefixed_acl_is_a_prefixed_command() -> None:
    from cli.kafka_acls_commands import acl_command_lines

    class Prefixed(NamedTuple):
        resource: str
        name: str
        operation: str
        pattern: str

    (line,) = acl_command_lines("b:9092", "a.properties", "User:u",
                                [Prefixed("group", "judgeflow-replay.", "Read", "prefixed")])
    assert parsed_kafka_acls([line]) == {("User:u", "group", "judgeflow-replay.", "prefixed",
                                          "Read")}


def test_kafka_acls_commands_add_exactly_the_acl_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kafka", "acls", "--format", "kafka-acls"]) == 0
    lines = capsys.readouterr().out.splitlines()
    want = {(f"User:judgeflow-{role}", a.resource, a.name, pattern(a), a.operation)
            for role in ROLES for a in role_acls(role, Settings())}
    assert parsed_kafka_acls(lines) == want
    # one command per role and resource, none repeated
    assert len(lines) == len(set(lines)) == len(
        {(role, a.resource, a.name, pattern(a)) for role in ROLES
         for a in role_acls(role, Settings())})
    assert all("--bootstrap-server 127.0.0.1:9092 --command-config admin.properties" in line
               for line in lines)


def test_kafka_acls_commands_take_a_principal_template(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kafka", "acls", "--format", "kafka-acls", "--role", "judge", "--principal",
                 "User:CN=judgeflow-{role},O=Hospital", "--command-config", "/etc/a b"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert {p for p, *_ in parsed_kafka_acls(lines)} == {"User:CN=judgeflow-judge,O=Hospital"}
    assert all("--command-config '/etc/a b'" in line for line in lines)
    assert main(["kafka", "acls", "--format", "kafka-acls", "--principal", "User:shared"]) == 2
    assert "must contain {role}" in capsys.readouterr().err
