"""The least-privilege data for the CLI's own roles (replay-judge, replay-debrief, replay-dlq,
producer): each holds what its command touches and nothing more, and the prefixed group ACLs
cover the group names the commands really use; ``kafka check``'s wording for a topic the
principal may not describe."""

from __future__ import annotations

import pytest

from agents.replay.dlq import group_for
from agents.replay.plan import group_name
from streams.kafka_acls import ROLES, WORKERS, Acl, dlq_acls, produce_acls, role_acls
from streams.kafka_check import _topic_finding
from streams.settings import Settings

S = Settings()
T = S.topics


def grants(acls: list[Acl]) -> set[tuple[str, str, str]]:
    return {(a.resource, a.name, a.operation) for a in acls}


def covers(acls: list[Acl], resource: str, name: str, operation: str) -> bool:
    return any(a.resource == resource and a.operation == operation
               and (a.name == name if a.pattern == "literal" else name.startswith(a.name))
               for a in acls)


def test_no_cli_role_creates_topics_or_joins_a_worker_group() -> None:
    for role in set(ROLES) - set(WORKERS):
        acls = role_acls(role, S)
        assert not [a for a in acls if a.operation == "Create"], role
        assert not {a.name for a in acls if a.resource == "group"} & set(S.groups.model_dump()
                                                                          .values()), role


@pytest.mark.parametrize("worker", ["judge", "debrief"])
def test_a_replay_holds_its_workers_topics_and_its_own_groups_by_prefix(worker: str) -> None:
    acls = role_acls(f"replay-{worker}", S)
    worker_topics = grants([a for a in role_acls(worker, S) if a.resource == "topic"])
    assert worker_topics <= grants(acls)
    for filters in ({}, {"task": "t1", "criterion": None, "kind": None}):
        assert covers(acls, "group", group_name(worker, "judge-v3+4f0c9a1be27d", filters),
                      "Read")
    groups = [a for a in acls if a.resource == "group"]
    assert len(groups) == 1 and groups[0].pattern == "prefixed"
    assert not covers(acls, "group", group_name("debrief" if worker == "judge" else "judge",
                                                "v1", {}), "Read")


def test_only_a_judge_replay_touches_the_batches_topic() -> None:
    assert covers(role_acls("replay-judge", S), "topic", T.replay_batches, "Write")
    assert not covers(role_acls("replay-debrief", S), "topic", T.replay_batches, "Read")


def test_a_dlq_re_drive_reads_the_dlq_writes_its_source_and_covers_every_type_group() -> None:
    dlq = T.dlq(T.adjudications)
    acls = dlq_acls(S, dlq)
    assert grants(acls) == {("topic", dlq, "Read"), ("topic", T.adjudications, "Write"),
                            ("group", f"judgeflow-replay-dlq.{dlq}.", "Read")}
    for error_type in (None, "schema_invalid"):  # --type T also reads the "all" group
        assert covers(acls, "group", group_for(dlq, error_type), "Read")
    assert not covers(acls, "group", group_for(T.dlq(T.judge_jobs), None), "Read")
    assert grants(acls) <= grants(role_acls("replay-dlq", S))


def test_the_producer_writes_the_inputs_outside_systems_feed_and_reads_nothing() -> None:
    acls = role_acls("producer", S)
    assert grants(acls) == {("topic", T.agent_answers, "Write"),
                            ("topic", T.debrief_requests, "Write")}
    assert produce_acls("x") == [Acl("topic", "x", "Write", produce_acls("x")[0].why)]


DENIED, UNKNOWN, EXISTS = 29, 3, 36
CREATE = Acl("topic", "ticks", "Create", "internal")
READ = Acl("topic", "ticks", "Read", "internal")


@pytest.mark.parametrize(("acl", "metadata", "create", "state", "note"), [
    (CREATE, DENIED, DENIED, "MISSING", "cannot be described (no Describe ACL"),
    (CREATE, DENIED, EXISTS, "ok", "exists but cannot be described"),
    (CREATE, DENIED, 0, "ok", "topic not created yet"),
    (CREATE, UNKNOWN, 0, "ok", "topic not created yet"),
    (CREATE, UNKNOWN, DENIED, "MISSING", "topic not created yet"),
    (READ, DENIED, None, "MISSING", "cannot be described"),
    (READ, UNKNOWN, None, "unknown", "topic does not exist yet"),
])
def test_a_topic_that_cannot_be_described_is_not_called_not_created(
        acl: Acl, metadata: int, create: int | None, state: str, note: str) -> None:
    creatable = {} if create is None else {"ticks": create}
    found = _topic_finding(acl, {"ticks": (metadata, 0)}, creatable)
    assert (found.state, note in found.note) == (state, True), found
