"""Least privilege as data: the Kafka ACLs each judgeflow role needs, and nothing more.

One principal per role. A worker reads its inputs (Read, and Read on its consumer group),
writes its outputs and dead-letter topics (Write), and owns its internal and changelog topics;
only the detector creates topics (its internal ones). The CLI commands that read or write
topics run as roles of their own: ``replay-judge``, ``replay-debrief`` and ``replay-dlq``
(their consumer groups by name prefix: one group per prompt version, per DLQ and type) and
``producer`` (``judgeflow produce``). Describe is never listed: Kafka's Read
and Write imply it (a test showed an explicit Describe ACL changes nothing). The shared topics
are created by the operator (``deploy/k8s/strimzi/topics.yaml``) or, on a cluster without an
authorizer, by judgeflow itself. ``judgeflow kafka check`` checks a principal against this
list, every worker checks its own at start, and ``deploy/k8s/strimzi/users.yaml`` is
generated from it (``judgeflow kafka acls --strimzi``; a contract test keeps them equal).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from streams.settings import Settings

Resource = Literal["topic", "group"]
Pattern = Literal["literal", "prefixed"]
#: Kafka ACL operation names, with the bit each has in a broker's "authorized operations".
OPERATION_BITS = {"Read": 3, "Write": 4, "Create": 5, "Describe": 8}
#: The roles, each a principal: the four workers, the read-only CLI/dashboard user, the
#: dashboard that saves decisions (and writes the access audit trail), the CLI commands that
#: read and write topics, and the auditor who reads the trail (``judgeflow audit``).
ROLES = ("detect", "judge", "debrief", "calibrate", "reader", "reviewer", "replay-judge",
         "replay-debrief", "replay-dlq", "producer", "auditor")
WORKERS = ("detect", "judge", "debrief", "calibrate")
#: Consumer-group name prefixes of the replays (see agents.replay.plan and .dlq).
REPLAY_GROUP = "judgeflow-replay.{worker}."
REPLAY_DLQ_GROUP = "judgeflow-replay-dlq.{topic}."


@dataclass(frozen=True)
class Acl:
    resource: Resource
    name: str
    operation: str
    why: str
    #: "prefixed": every resource whose name starts with ``name`` (a family of groups)
    pattern: Pattern = "literal"


def _topic(name: str, ops: Iterable[str], why: str) -> list[Acl]:
    return [Acl("topic", name, op, why) for op in ops]


def _reads(names: Iterable[str], why: str) -> list[Acl]:
    return [a for n in names for a in _topic(n, ("Read",), why)]


def _writes(names: Iterable[str], why: str) -> list[Acl]:
    return [a for n in names for a in _topic(n, ("Write",), why)]


def faust_internal_topics(settings: Settings) -> list[str]:
    """The topics Faust creates for the detect app (its id is the detect group): the cell
    table's changelog and the leader-assignor topic."""
    app = settings.groups.detect
    return [f"{app}-cells-changelog", f"{app}-__assignor-__leader"]


def role_acls(role: str, settings: Settings) -> list[Acl]:
    """Every ACL ``role`` needs, in a stable order (no duplicates)."""
    t, g = settings.topics, settings.groups
    acls: list[Acl]
    if role == "detect":
        internal = [t.detect_ticks, *faust_internal_topics(settings)]
        acls = (_reads([t.agent_answers], "input")
                + _writes([t.cell_outcomes, t.judge_jobs], "output")
                + _writes([t.dlq(t.agent_answers)], "dead letters")
                + [a for n in internal for a in _topic(
                    n, ("Read", "Write", "Create"), "internal (created by detect)")]
                + [Acl("group", g.detect, "Read", "consumer group")])
    elif role == "judge":
        acls = (_reads([t.judge_jobs], "input")
                + _reads([t.judge_results], "ledger: results already published")
                + _writes([t.judge_results], "output")
                + _writes([t.dlq(t.judge_jobs)], "dead letters")
                + _reads([t.cell_outcomes, t.adjudications], "gate answers")
                + _reads([t.llm_journal], "paid answers kept for reuse")
                + _writes([t.llm_journal], "paid answers kept for reuse")
                + [Acl("group", g.judge, "Read", "consumer group")])
    elif role == "debrief":
        acls = (_reads([t.debrief_requests], "input")
                + _reads([t.case_evaluations], "ledger: evaluations already published")
                + _writes([t.case_evaluations], "output")
                + _writes([t.dlq(t.debrief_requests)], "dead letters")
                + _reads([t.llm_journal], "paid answers kept for reuse")
                + _writes([t.llm_journal], "paid answers kept for reuse")
                + [Acl("group", g.debrief, "Read", "consumer group")])
    elif role == "calibrate":  # reads whole topics without a group
        acls = (_reads([t.judge_results, t.adjudications, t.cell_outcomes, t.judge_jobs],
                       "input")
                + _reads([t.calibration, t.dlq(t.adjudications)], "already published")
                + _writes([t.calibration], "output")
                + _writes([t.dlq(t.adjudications)], "dead letters"))
    elif role in ("replay-judge", "replay-debrief"):
        acls = _replay_acls(role.removeprefix("replay-"), settings)
    elif role == "replay-dlq":  # any of the four dead-letter topics, back to its source
        acls = [a for source in _dlq_sources(settings) for a in dlq_acls(settings, t.dlq(source))]
    elif role == "producer":  # `judgeflow produce`: what outside systems feed judgeflow
        acls = produce_acls(t.agent_answers) + produce_acls(t.debrief_requests)
    elif role in ("reader", "reviewer"):  # tail, compare, the dashboard: group-less
        acls = _reads([t.cell_outcomes, t.judge_jobs, t.judge_results, t.case_evaluations,
                       t.calibration, t.adjudications], "read by the CLI and the dashboard")
        if role == "reviewer":  # the review page that saves reviewers' decisions
            acls += _writes([t.adjudications], "reviewers' decisions (the review page)")
            # append only: no Read, so the page cannot read back who saw what
            acls += _writes([t.audit], "access audit trail (the page serves no text without)")
    elif role == "auditor":  # `judgeflow audit`: governance reads the trail, nothing else
        acls = _reads([t.audit], "access audit trail (judgeflow audit)")
    else:
        raise ValueError(f"unknown role {role!r}; one of {', '.join(ROLES)}")
    return _unique(acls)


def _unique(acls: list[Acl]) -> list[Acl]:
    unique: dict[tuple[str, str, str], Acl] = {}
    for a in acls:
        unique.setdefault((a.resource, a.name, a.operation), a)
    return list(unique.values())


def _replay_acls(worker: str, settings: Settings) -> list[Acl]:
    """``judgeflow replay judge|debrief``: the worker's inputs, ledger, outputs, dead letters
    and journal under the replay's own groups (one per prompt version: a prefix)."""
    worker_acls = role_acls(worker, settings)
    own = [a for a in worker_acls if a.resource == "topic"]
    if worker == "judge":  # --batch: the Message Batches it submitted, kept on a topic
        batches = settings.topics.replay_batches
        own += (_reads([batches], "--batch: batches submitted")
                + _writes([batches], "--batch: batches submitted"))
    group = Acl("group", REPLAY_GROUP.format(worker=worker), "Read",
                "replay consumer groups (one per prompt version)", "prefixed")
    return _unique([*own, group])


def _dlq_sources(settings: Settings) -> list[str]:
    t = settings.topics
    return [t.agent_answers, t.judge_jobs, t.debrief_requests, t.adjudications]


def dlq_acls(settings: Settings, dlq_topic: str) -> list[Acl]:
    """``judgeflow replay dlq DLQ``: read the dead letters, write them back to their source
    topic, and the run's groups (one per ``--type``; a typed run also reads the "all"
    group's offsets, so the prefix covers them all)."""
    source = dlq_topic.removesuffix(".dlq")
    return [Acl("topic", dlq_topic, "Read", "dead letters to re-drive"),
            Acl("topic", source, "Write", "re-driven to their source topic"),
            Acl("group", REPLAY_DLQ_GROUP.format(topic=dlq_topic), "Read",
                "re-drive progress (a group per --type, and the \"all\" group)", "prefixed")]


def produce_acls(topic: str) -> list[Acl]:
    """``judgeflow produce TOPIC``: Write on that topic (an idempotent producer needs no
    more: since Kafka 3.0 Write on a topic implies IdempotentWrite)."""
    return [Acl("topic", topic, "Write", "records sent by `judgeflow produce`")]


def topics_of(acls: Iterable[Acl], settings: Settings) -> list[str]:
    """The topics ``acls`` name that judgeflow makes sure exist (Faust's own excluded)."""
    faust = set(faust_internal_topics(settings))
    return list(dict.fromkeys(a.name for a in acls
                              if a.resource == "topic" and a.name not in faust))


def role_topics(role: str, settings: Settings) -> list[str]:
    """The topics ``role`` touches that judgeflow makes sure exist (Faust's own excluded)."""
    return topics_of(role_acls(role, settings), settings)


def creates(role: str, settings: Settings) -> set[str]:
    return {a.name for a in role_acls(role, settings) if a.operation == "Create"}


def strimzi_acls(role: str, settings: Settings) -> list[dict[str, object]]:
    """``spec.authorization.acls`` of a Strimzi ``KafkaUser`` (type simple) for ``role``."""
    by_resource: dict[tuple[str, str, str], list[str]] = {}
    for a in role_acls(role, settings):
        by_resource.setdefault((a.resource, a.name, a.pattern), []).append(a.operation)
    return [{"resource": {"type": kind, "name": name, "patternType": pattern},
             "operations": ops, "host": "*"}
            for (kind, name, pattern), ops in by_resource.items()]
