"""judgeflow on a secured Apache Kafka (SASL_SSL with SCRAM, mutual TLS, StandardAuthorizer):
each worker runs as its own principal with exactly the ACLs streams.kafka_acls lists and
works; removing one ACL, a wrong password or an untrusted CA stops the worker or the command
within seconds in one line naming the cause, with a non-zero exit."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.debrief.sampledata import REQUESTS_FILE
from schemas.dlq import dead_letter_headers
from streams import kafka_clients
from streams.kafka_acls import Acl, dlq_acls, faust_internal_topics, role_acls
from streams.kafka_check import shown_name
from streams.kafka_security import librdkafka_properties
from streams.settings import Settings
from streams.topics import ensure_topics
from tests.acl_admin import grant, revoke
from tests.helpers import collect, produce, settings_env, worker
from tests.helpers import test_settings as make_settings
from tests.integration.sample import load_sample
from tests.kafka import apache_kafka_or_skip
from tests.unit.agents.calibrate import scenario as sc
from tests.unit.agents.judge.fixtures import disagreement, write_charts, write_skill
from tools.kafka import ApacheKafka
from tools.kafka.certs import TestCA

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
#: how long a refused worker or command may take to say so (it takes well under a second)
FAIL_FAST_SECONDS = 15.0


@pytest.fixture(scope="module")
def kafka() -> Iterator[ApacheKafka]:
    users = {role: f"{role}-pw" for role in ("detect", "judge", "debrief", "calibrate",
                                             "reader")}
    with apache_kafka_or_skip(secure=True, users=users) as k:
        yield k


def scram(k: ApacheKafka, user: str, password: str | None = None,
          mechanism: str = "SCRAM-SHA-512") -> dict[str, Any]:
    return {"bootstrap_servers": k.bootstrap_for("SASL_SSL"), "security_protocol": "SASL_SSL",
            "sasl_mechanism": mechanism, "sasl_username": user,
            "sasl_password": password or f"{user}-pw", "ssl_cafile": k.ca_file}


def mtls(k: ApacheKafka, name: str) -> dict[str, Any]:
    cert = k.client_cert(name)
    return {"bootstrap_servers": k.bootstrap_for("SSL"), "security_protocol": "SSL",
            "ssl_cafile": k.ca_file, "ssl_certfile": cert.cert, "ssl_keyfile": cert.key}


def as_admin(s: Settings, k: ApacheKafka) -> Settings:
    """The same topics and groups through the harness's PLAINTEXT (super user) listener."""
    return s.model_copy(update={"kafka": s.kafka.model_copy(update={
        "bootstrap_servers": k.bootstrap, "security_protocol": "PLAINTEXT",
        "sasl_mechanism": None, "sasl_username": None, "sasl_password": None,
        "ssl_cafile": None, "ssl_certfile": None, "ssl_keyfile": None})})


def role_settings(k: ApacheKafka, tmp_path: Path, security: dict[str, Any],
                  role: str = "") -> Settings:
    """The role's settings; the detector keeps the sample's skill (its answers are for it)."""
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    skill = {} if role == "detect" else {"skill_dir": write_skill(data)}
    return make_settings(k.bootstrap, kafka=security, charts_dir=write_charts(data),
                         settle_seconds=1.0, **skill)


def jobs(s: Settings) -> list[tuple[bytes, bytes]]:
    j = disagreement(job_id=f"job-{s.groups.judge}")
    return [(j.key.encode(), j.model_dump_json().encode()), (b"bad", b"{not json")]


def debrief_requests() -> list[tuple[bytes, bytes]]:
    line = REQUESTS_FILE.read_bytes().splitlines()[0]
    return [(orjson.loads(line)["request_id"].encode(), line), (b"bad", b"{not json")]


def sample_answers(cells: int = 3) -> list[tuple[bytes, bytes]]:
    """Every agent's answers to the first ``cells`` cells of the checked-in sample (the
    detector's default skill), and one malformed record."""
    sample = load_sample()
    first = list(dict.fromkeys(k.decode() for k, _ in sample.answers))[:cells]
    return [*sample.by_cells(set(first)), (b"bad", b"{not json")]


def _keyed(records: list[Any]) -> list[tuple[bytes, bytes]]:
    return [(r.key.encode(), orjson.dumps(r.model_dump(mode="json"))) for r in records]


async def feed(role: str, admin: Settings) -> str:
    """Put input for ``role`` on its topics (as the super user); returns the topic on which
    its output appears."""
    t = admin.topics
    await ensure_topics(admin)
    if role == "judge":
        await produce(admin.kafka, t.judge_jobs, jobs(admin))
        return t.judge_results
    if role == "debrief":
        await produce(admin.kafka, t.debrief_requests, debrief_requests())
        return t.case_evaluations
    if role == "calibrate":
        await produce(admin.kafka, t.judge_results, _keyed(sc.results()))
        await produce(admin.kafka, t.adjudications, _keyed(sc.adjudications()))
        await produce(admin.kafka, t.cell_outcomes, _keyed(sc.outcomes()))
        return t.calibration
    await produce(admin.kafka, t.agent_answers, sample_answers())
    return t.cell_outcomes


# detect over SCRAM-SHA-512, judge over mutual TLS, debrief over SCRAM-SHA-256,
# calibrate over mutual TLS: every worker, both ways of authenticating.
CASES = [("detect", "scram512"), ("judge", "mtls"), ("debrief", "scram256"),
         ("calibrate", "mtls")]


def principal_for(k: ApacheKafka, role: str, how: str, tag: str) -> tuple[str, dict[str, Any]]:
    if how == "mtls":
        name = f"{role}-{tag}"
        return f"User:{name}", mtls(k, name)
    mech = {"scram512": "SCRAM-SHA-512", "scram256": "SCRAM-SHA-256", "plain": "PLAIN"}[how]
    return f"User:{role}", scram(k, role, mechanism=mech)


def as_role(k: ApacheKafka, tmp_path: Path, role: str, how: str,
            tag: str) -> tuple[str, Settings, Settings]:
    """``role``'s principal (authenticating ``how``), its settings and the same settings as
    the super user, with every topic created."""
    principal, security = principal_for(k, role, how, tag)
    s = role_settings(k, tmp_path, security)
    admin = as_admin(s, k)
    # every shared topic, as the operator creates them (deploy/k8s/strimzi/topics.yaml)
    asyncio.run(ensure_topics(admin, extra=[admin.topics.replay_batches]))
    return principal, s, admin


@contextmanager
def granted(k: ApacheKafka, principal: str, acls: list[Acl]) -> Iterator[None]:
    """``principal`` holds ``acls`` inside the block and none of them after it."""
    grant(k.bootstrap, principal, acls)
    try:
        yield
    finally:
        revoke(k.bootstrap, principal, acls)


@contextmanager
def reader_with_one_record(k: ApacheKafka, tmp_path: Path, how: str, tag: str,
                           topic: Callable[[Settings], str], value: bytes) -> Iterator[Settings]:
    """The reader role's settings, with one record on ``topic`` (put there by the super
    user) and the reader's ACLs inside the block."""
    principal, s, admin = as_role(k, tmp_path, "reader", how, tag)
    asyncio.run(produce(admin.kafka, topic(s), [(b"k", value)]))
    with granted(k, principal, role_acls("reader", s)):
        yield s


@pytest.mark.parametrize(("role", "how"), CASES)
def test_each_worker_works_as_its_own_principal_with_exactly_its_acls(
        kafka: ApacheKafka, tmp_path: Path, role: str, how: str) -> None:
    """Valid input, so the real outputs are written (and the detector's changelog and tick
    topic, the dead letters of the malformed record) under exactly the documented ACLs."""
    principal, security = principal_for(kafka, role, how, "ok")
    s = role_settings(kafka, tmp_path, security, role)
    out_topic = asyncio.run(feed(role, as_admin(s, kafka)))
    with granted(kafka, principal, role_acls(role, s)), worker(role, s, tmp_path) as w:
        got = asyncio.run(collect(kafka.bootstrap, out_topic, until=1, timeout=90, quiet=0.5))
        assert got, f"{role} published nothing on {out_topic}:\n{w.log_text()[-3000:]}"
        also = WRITTEN_TOO.get(role, lambda _: [])(s)
        for topic in also:  # written by the worker itself, as its principal
            assert asyncio.run(collect(kafka.bootstrap, topic, until=1, timeout=60, quiet=0)), \
                f"{role} wrote nothing on {topic}:\n{w.log_text()[-3000:]}"
        assert w.alive, w.log_text()[-3000:]
        assert "Authorization" not in w.log_text()
    print(f"{role}: {len(got)} record(s) on {out_topic}, and on {', '.join(also) or '-'}")


#: what else a worker writes with valid input: the detector its cell table's changelog
#: (and the malformed record's dead letter), the debrief its dead letter
WRITTEN_TOO: dict[str, Callable[[Settings], list[str]]] = {
    "detect": lambda s: [faust_internal_topics(s)[0], s.topics.dlq(s.topics.agent_answers)],
    "debrief": lambda s: [s.topics.dlq(s.topics.debrief_requests)],
}


def run_cli(s: Settings, *args: str,
            timeout: float = 60.0) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**settings_env(s, reveal_secrets=True), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": str(REPO)}
    began = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    return proc, time.monotonic() - began


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    """The command's error: exactly one line on stderr that starts with ``judgeflow:``."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in proc.stderr, proc.stderr
    assert len([ln for ln in lines if ln.startswith("judgeflow:")]) == 1, proc.stderr
    return next(ln for ln in lines if ln.startswith("judgeflow:"))


@pytest.mark.parametrize("how", ["scram512", "mtls"])
def test_the_cli_reads_as_the_reader_principal(kafka: ApacheKafka, tmp_path: Path,
                                               how: str) -> None:
    with reader_with_one_record(kafka, tmp_path, how, "cli", lambda s: s.topics.judge_results,
                                b'{"x": 1}') as s:
        proc, _ = run_cli(s, "tail", s.topics.judge_results, "--from-beginning", "--max", "1")
        assert proc.returncode == 0, proc.stderr
        assert orjson.loads(proc.stdout.splitlines()[0]) == {"x": 1}
        check, _ = run_cli(s, "kafka", "check", "--role", "reader")
        assert check.returncode == 0, check.stdout + check.stderr
        assert "MISSING" not in check.stdout
        denied, elapsed = run_cli(s, "tail", s.topics.agent_answers, "--from-beginning",
                                  "--max", "1")
        line = one_line_error(denied)  # the topic exists: no ACL, not "does not exist"
        assert f"not authorized to Describe/Read topic '{s.topics.agent_answers}'" in line, line
        assert "does not exist" not in line and elapsed < FAIL_FAST_SECONDS, line


KCAT = shutil.which("kcat") or shutil.which("kafkacat")


def librdkafka_version() -> tuple[int, ...]:
    out = subprocess.run([str(KCAT), "-V"], capture_output=True, text=True).stdout
    found = re.search(r"librdkafka (\d+)\.(\d+)\.(\d+)", out)
    return tuple(int(g) for g in found.groups()) if found else (0,)


@pytest.mark.skipif(KCAT is None, reason="kcat not installed (apt-get install kcat)")
@pytest.mark.parametrize("how", ["scram512", "plain", "mtls"])
def test_kcat_reads_with_the_translated_config(kafka: ApacheKafka, tmp_path: Path,
                                               how: str) -> None:
    """librdkafka interop: the config judgeflow accepts, in librdkafka's names, works for
    kcat as the same principal (and the docs' translation table is these names)."""
    if how == "scram512" and librdkafka_version() < (2, 6, 1):
        pytest.skip(f"librdkafka {librdkafka_version()} predates 2.6.1, whose SCRAM is "
                    "rejected by Kafka 4.x (confluentinc/librdkafka#4895)")
    with reader_with_one_record(kafka, tmp_path, how, "kcat", lambda s: s.topics.calibration,
                                b'{"kcat": 1}') as s:
        args = [a for name, value in librdkafka_properties(s.kafka).items()
                if name != "bootstrap.servers" for a in ("-X", f"{name}={value}")]
        proc = subprocess.run([str(KCAT), "-b", s.kafka.bootstrap_servers, *args, "-C", "-t",
                               s.topics.calibration, "-c", "1", "-e", "-q"],
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '{"kcat": 1}'


def _worker_exit(s: Settings, role: str, tmp_path: Path, tag: str) -> tuple[int, str, float]:
    began = time.monotonic()
    with worker(role, s, tmp_path, tag=tag) as w:
        code = w.proc.wait(timeout=60)
        return code, w.log_text(), time.monotonic() - began


def judgeflow_lines(log: str) -> list[str]:
    return [ln for ln in log.splitlines() if ln.startswith("judgeflow:")]


#: one case per ACL the judge needs (inputs, outputs, DLQ, gate answers, journal, group)
JUDGE_ACLS = len(role_acls("judge", Settings()))


@pytest.mark.parametrize("index", range(JUDGE_ACLS))
def test_removing_one_judge_acl_stops_the_worker_in_one_line(
        kafka: ApacheKafka, tmp_path: Path, index: int) -> None:
    principal, s, _ = as_role(kafka, tmp_path, "judge", "mtls", f"less{index}")
    acls = role_acls("judge", s)
    assert len(acls) == JUDGE_ACLS
    removed = acls[index]
    with granted(kafka, principal, [a for a in acls if a != removed]):
        code, log, elapsed = _worker_exit(s, "judge", tmp_path, f"less{index}")
    assert code != 0, log[-2000:]
    lines = judgeflow_lines(log)
    assert len(lines) == 1 and "Traceback" not in log, log[-3000:]
    assert f"{removed.operation} on {removed.resource} {removed.name}" in lines[0], lines[0]
    assert elapsed < FAIL_FAST_SECONDS, f"{elapsed:.1f}s"
    print(f"without {removed.operation} on {removed.name}: judge exits {code} after "
          f"{elapsed:.2f}s")


def test_removing_an_internal_topic_acl_stops_the_detector_in_one_line(
        kafka: ApacheKafka, tmp_path: Path) -> None:
    principal, s, _ = as_role(kafka, tmp_path, "detect", "mtls", "less")
    acls = role_acls("detect", s)
    removed = next(a for a in acls if a.operation == "Create" and "changelog" in a.name)
    with granted(kafka, principal, [a for a in acls if a != removed]):
        code, log, elapsed = _worker_exit(s, "detect", tmp_path, "less")
    lines = judgeflow_lines(log)
    assert code != 0 and len(lines) == 1, log[-3000:]
    assert f"Create on topic {removed.name}" in lines[0]
    assert elapsed < FAIL_FAST_SECONDS
    print(f"without Create on {removed.name}: detect exits {code} after {elapsed:.2f}s")


def test_wrong_password_stops_worker_and_cli_in_one_line(kafka: ApacheKafka,
                                                         tmp_path: Path) -> None:
    s = role_settings(kafka, tmp_path, scram(kafka, "judge", password="not-the-password"))
    code, log, elapsed = _worker_exit(s, "judge", tmp_path, "pw")
    lines = judgeflow_lines(log)
    assert code != 0 and len(lines) == 1, log[-3000:]
    assert "refused SASL SCRAM-SHA-512 login as 'judge'" in lines[0], lines[0]
    assert elapsed < FAIL_FAST_SECONDS
    proc, cli_elapsed = run_cli(s, "tail", s.topics.judge_results, "--max", "1")
    assert "wrong username or password" in one_line_error(proc)
    assert cli_elapsed < FAIL_FAST_SECONDS
    print(f"wrong password: worker {elapsed:.2f}s, tail {cli_elapsed:.2f}s")


def test_untrusted_ca_stops_worker_and_cli_in_one_line(kafka: ApacheKafka,
                                                       tmp_path: Path) -> None:
    other = TestCA(tmp_path / "other-ca")  # a CA that did not sign the brokers' certificate
    s = role_settings(kafka, tmp_path, {**scram(kafka, "judge"), "ssl_cafile": other.ca_file})
    code, log, elapsed = _worker_exit(s, "judge", tmp_path, "ca")
    lines = judgeflow_lines(log)
    assert code != 0 and len(lines) == 1, log[-3000:]
    assert "is not trusted" in lines[0] and "SSL_CAFILE" in lines[0], lines[0]
    assert elapsed < FAIL_FAST_SECONDS
    proc, cli_elapsed = run_cli(s, "tail", s.topics.judge_results, "--max", "1")
    assert "is not trusted" in one_line_error(proc)
    assert cli_elapsed < FAIL_FAST_SECONDS
    print(f"untrusted CA: worker {elapsed:.2f}s, tail {cli_elapsed:.2f}s")


def test_kafka_check_names_what_is_missing(kafka: ApacheKafka, tmp_path: Path) -> None:
    principal, s, _ = as_role(kafka, tmp_path, "debrief", "mtls", "check")
    acls = role_acls("debrief", s)
    removed = next(a for a in acls if a.operation == "Write" and a.name.endswith(".dlq"))
    with granted(kafka, principal, [a for a in acls if a != removed]):
        proc, _ = run_cli(s, "kafka", "check", "--role", "debrief")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = proc.stdout.splitlines()
    assert len(rows) == len(acls)
    missing = [r for r in rows if "MISSING" in r]
    assert len(missing) == 1 and removed.name in missing[0] and "Write" in missing[0], rows


def test_kafka_check_says_an_existing_topic_cannot_be_described(kafka: ApacheKafka,
                                                               tmp_path: Path) -> None:
    """The tick topic exists but the principal holds no ACL on it: Kafka hides whether it
    exists, so the check says it cannot be described, not "not created yet"."""
    principal, s, _ = as_role(kafka, tmp_path, "detect", "mtls", "hidden")  # ticks too
    ticks = s.topics.detect_ticks
    with granted(kafka, principal, [a for a in role_acls("detect", s) if a.name != ticks]):
        proc, _ = run_cli(s, "kafka", "check", "--role", "detect")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    rows = [r for r in proc.stdout.splitlines() if ticks in r]
    assert len(rows) == 3 and all("MISSING" in r and "cannot be described" in r
                                  for r in rows), rows
    assert not [r for r in rows if "not created yet" in r], rows


def test_an_acl_removed_while_the_judge_runs_stops_it_in_one_line(kafka: ApacheKafka,
                                                                 tmp_path: Path) -> None:
    principal, s, admin = as_role(kafka, tmp_path, "judge", "mtls", "running")
    acls = role_acls("judge", s)
    write = next(a for a in acls if a.operation == "Write" and a.name == s.topics.judge_results)
    # leaving the block revokes the rest (the Write once more: a no-op)
    with granted(kafka, principal, acls), worker("judge", s, tmp_path, tag="running") as w:
        first = disagreement(job_id="job-running-1")
        asyncio.run(produce(admin.kafka, s.topics.judge_jobs,
                            [(first.key.encode(), first.model_dump_json().encode())]))
        assert asyncio.run(collect(kafka.bootstrap, s.topics.judge_results, until=1,
                                   timeout=60, quiet=0.2)), w.log_text()[-3000:]
        revoke(kafka.bootstrap, principal, [write])
        second = disagreement(job_id="job-running-2", patient="P-2")
        began = time.monotonic()
        asyncio.run(produce(admin.kafka, s.topics.judge_jobs,
                            [(second.key.encode(), second.model_dump_json().encode())]))
        code = w.proc.wait(timeout=60)
        elapsed = time.monotonic() - began
        log = w.log_text()
    lines = judgeflow_lines(log)
    assert code != 0 and len(lines) == 1 and "Traceback" not in log, log[-3000:]
    assert s.topics.judge_results in lines[0], lines[0]
    assert elapsed < FAIL_FAST_SECONDS
    print(f"Write revoked while running: judge exits {code} {elapsed:.2f}s after the next job")


# ---- the CLI's own roles: replay judge|debrief, replay dlq, produce --------------------


def _dead_letter(s: Settings) -> list[tuple[bytes, bytes, list[tuple[str, bytes]]]]:
    source = s.topics.agent_answers
    return [(b"k1", b'{"re": "driven"}',
             dead_letter_headers("schema_error", "field x: missing", source, 0, 7))]


async def _put_dead_letter(admin: Settings) -> None:
    producer = kafka_clients.producer(admin.kafka, acks="all")
    await producer.start()
    try:
        for key, value, headers in _dead_letter(admin):
            await producer.send_and_wait(admin.topics.dlq(admin.topics.agent_answers),
                                         key=key, value=value, headers=headers)
    finally:
        await producer.stop()


def cli_feed(role: str, admin: Settings, tmp_path: Path) -> tuple[list[str], str]:
    """Input for the command of ``role`` (put there by the super user): its arguments and
    the topic its output appears on."""
    t = admin.topics
    if role == "replay-judge":
        asyncio.run(produce(admin.kafka, t.judge_jobs, jobs(admin)[:1]))
        return ["replay", "judge"], t.judge_results
    if role == "replay-debrief":
        asyncio.run(produce(admin.kafka, t.debrief_requests, debrief_requests()[:1]))
        return ["replay", "debrief"], t.case_evaluations
    if role == "replay-dlq":
        asyncio.run(_put_dead_letter(admin))
        return ["replay", "dlq", t.dlq(t.agent_answers)], t.agent_answers
    lines = tmp_path / "answers.jsonl"
    lines.write_bytes(b"\n".join(v for _, v in sample_answers(1)[:-1]) + b"\n")
    return ["produce", t.agent_answers, str(lines)], t.agent_answers


CLI_ROLES = ["replay-judge", "replay-debrief", "replay-dlq", "producer"]


def clean_exit(proc: subprocess.CompletedProcess[str]) -> None:
    """No traceback, no client left open, no wrong cause."""
    for bad in ("Traceback", "Unclosed", "cluster operation", "creating"):
        assert bad not in proc.stderr, proc.stderr


@pytest.mark.parametrize("role", CLI_ROLES)
def test_each_cli_command_works_with_exactly_its_roles_acls(kafka: ApacheKafka,
                                                            tmp_path: Path, role: str) -> None:
    """The command as its own principal holding exactly ``kafka acls --role ROLE``: it
    creates nothing (every topic exists), checks its ACLs, and its output arrives."""
    principal, s, admin = as_role(kafka, tmp_path, role, "mtls", "ok")
    args, out_topic = cli_feed(role, admin, tmp_path)
    with granted(kafka, principal, role_acls(role, s)):
        check, _ = run_cli(s, "kafka", "check", "--role", role)
        assert check.returncode == 0 and "MISSING" not in check.stdout, check.stdout
        if role.startswith("replay-"):  # the estimate first, as an operator would
            dry, _ = run_cli(s, *args, "--dry-run")
            assert dry.returncode == 0, dry.stdout + dry.stderr
            clean_exit(dry)
        proc, elapsed = run_cli(s, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    clean_exit(proc)
    got = asyncio.run(collect(kafka.bootstrap, out_topic, until=1, timeout=30, quiet=0.2))
    assert got, f"{role}: nothing on {out_topic}: {proc.stdout} {proc.stderr}"
    print(f"{role}: `judgeflow {' '.join(args[:2])}` exit 0 in {elapsed:.2f}s, "
          f"{len(got)} record(s) on {out_topic}")


def _without(role: str, s: Settings) -> list[tuple[str, Acl, bool]]:
    """(role, the ACL removed, dry run) cases: each kind of ACL of each CLI role once."""
    t, acls = s.topics, role_acls(role, s)
    if role == "replay-dlq":
        acls = dlq_acls(s, t.dlq(t.agent_answers))

    def one(pred: Callable[[Acl], bool]) -> Acl:
        return next(a for a in acls if pred(a))
    if role == "producer":
        return [(role, one(lambda a: a.name == t.agent_answers), False)]
    group = one(lambda a: a.resource == "group")
    read = one(lambda a: a.operation == "Read" and a.resource == "topic")
    write = one(lambda a: a.operation == "Write")
    return [(role, group, True), (role, read, True), (role, write, False)]


CLI_REMOVALS = [pytest.param(*case, id=f"{case[0]}-{case[1].operation}-{case[1].resource}"
                             + ("-dry" if case[2] else ""))
                for role in CLI_ROLES for case in _without(role, Settings())]


@pytest.mark.parametrize(("role", "default_acl", "dry_run"), CLI_REMOVALS)
def test_removing_one_acl_stops_a_cli_command_in_one_line_naming_it(
        kafka: ApacheKafka, tmp_path: Path, role: str, default_acl: Acl,
        dry_run: bool) -> None:
    principal, s, admin = as_role(kafka, tmp_path, role, "mtls", "less")
    args, _ = cli_feed(role, admin, tmp_path)
    # the same ACL under this test's topic names
    removed = next(r for _, r, d in _without(role, s) if d == dry_run
                   and (r.resource, r.operation) == (default_acl.resource,
                                                    default_acl.operation))
    with granted(kafka, principal, [a for a in role_acls(role, s) if a != removed]):
        proc, elapsed = run_cli(s, *args, *(["--dry-run"] if dry_run else []))
    line = one_line_error(proc)
    clean_exit(proc)
    assert proc.returncode == 1, line  # an ACL to grant: exit 1, as for a worker
    want = f"{removed.operation} on {removed.resource} {shown_name(removed)}"
    assert want in line and f"--role {role}" in line, line
    assert elapsed < FAIL_FAST_SECONDS, f"{elapsed:.1f}s"
    print(f"{role} without {want}{' (dry run)' if dry_run else ''}: exit "
          f"{proc.returncode} after {elapsed:.2f}s")


# On the embedded broker only: it is what the client factory must recognise.
@pytest.mark.brokers("embedded")
def test_the_embedded_broker_is_recognised_and_kafka_is_not(bootstrap: str, broker: Any,
                                                           kafka: ApacheKafka) -> None:
    """The work-arounds go to noida-db only: recognised by what it answers, never Kafka."""
    from streams import kafka_clients
    from tools.broker import EmbeddedBroker

    assert isinstance(broker, EmbeddedBroker)
    embedded = asyncio.run(kafka_clients.connect(bootstrap))
    apache = asyncio.run(kafka_clients.connect(kafka.bootstrap))
    assert embedded.embedded == "noida-db 0.2.3"
    assert apache.embedded is None and apache.info.cluster_id
    s = make_settings(bootstrap)
    check, _ = run_cli(s, "kafka", "check", "--role", "detect")
    assert check.returncode == 0 and "no authorizer" in check.stdout, check.stderr
