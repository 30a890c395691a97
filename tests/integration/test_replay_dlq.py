"""`judgeflow replay dlq X.dlq` on the real broker: dead letters go back to X with their
original key and bytes; --dry-run sends nothing; --type filters; a second run (filtered or
not) re-drives nothing it or another run already re-drove, only new dead letters."""

from __future__ import annotations

import pytest

from agents.settings import Settings
from schemas.dlq import dead_letter_headers
from streams import kafka_clients
from streams.topics import ensure_topics
from tests.helpers import collect, test_settings
from tests.integration.test_cli import run_cli

pytestmark = pytest.mark.integration


async def _dead_letters(s: Settings, letters: list[tuple[bytes, bytes, str]]) -> None:
    source = s.topics.agent_answers
    producer = kafka_clients.producer(s.kafka, acks="all")
    await producer.start()
    try:
        for i, (key, value, etype) in enumerate(letters):
            headers = dead_letter_headers(etype, "field x: missing", source, 0, 100 + i)
            await producer.send_and_wait(s.topics.dlq(source), value=value, key=key,
                                         headers=headers)
    finally:
        await producer.stop()


async def test_redrive_dry_run_filter_and_idempotence(bootstrap: str) -> None:
    s = test_settings(bootstrap)
    source = s.topics.agent_answers
    dlq = s.topics.dlq(source)
    await ensure_topics(s)
    letters = [(b"k1", b"{bad json", "invalid_json"), (b"k2", b'{"a": 1}', "schema_error"),
               (b"k3", b'{"b": 2}', "schema_error"), (b"k4", b"[]", "invalid_json"),
               (b"k5", b'{"c": 3}', "schema_error")]
    await _dead_letters(s, letters)

    dry = run_cli(s, "replay", "dlq", dlq, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would re-drive 5 (invalid_json 2, schema_error 3)" in dry.stdout
    assert f"to {source} 5" in dry.stdout
    assert await collect(bootstrap, source, timeout=2, quiet=0) == []

    typed = run_cli(s, "replay", "dlq", dlq, "--type", "invalid_json")
    assert "re-drove 2 (invalid_json 2)" in typed.stdout, typed.stdout + typed.stderr
    assert "other types 3" in typed.stdout
    everything = run_cli(s, "replay", "dlq", dlq)
    assert "re-drove 3 (schema_error 3)" in everything.stdout, everything.stdout
    assert "already re-driven 2" in everything.stdout

    out = await collect(bootstrap, source, until=5, timeout=20, quiet=1)
    assert sorted((r.key, r.value) for r in out) == sorted((k, v) for k, v, _ in letters)
    marks = {dict(r.headers)["dlq.replayed_from"].decode() for r in out}
    assert len(marks) == 5 and all(m.startswith(f"{dlq}:") for m in marks)

    again = run_cli(s, "replay", "dlq", dlq)
    assert "re-drove 0 (none)" in again.stdout
    assert "re-drove 0 (none)" in run_cli(s, "replay", "dlq", dlq, "--type", "schema_error").stdout
    await _dead_letters(s, [(b"k6", b'{"d": 4}', "schema_error")])
    assert "re-drove 1 (schema_error 1)" in run_cli(s, "replay", "dlq", dlq).stdout
    assert len(await collect(bootstrap, source, until=6, timeout=20, quiet=1)) == 6


def test_not_a_dlq_is_a_clear_error(bootstrap: str) -> None:
    s = test_settings(bootstrap)
    proc = run_cli(s, "replay", "dlq", s.topics.agent_answers)
    assert proc.returncode == 2 and "is not a dead-letter topic" in proc.stderr
    assert "Traceback" not in proc.stderr


async def test_progress_line_on_a_terminal_only(bootstrap: str) -> None:
    import os
    import pty
    import subprocess

    from tests.helpers import settings_env
    from tests.integration.test_cli import CLI

    s = test_settings(bootstrap)
    await ensure_topics(s)
    await _dead_letters(s, [(b"k1", b"{}", "schema_error"), (b"k2", b"{}", "schema_error")])
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGEFLOW_")}
    env.update(settings_env(s))
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run([*CLI, "replay", "dlq", s.topics.dlq(s.topics.agent_answers),
                               "--dry-run"], stderr=follower, stdout=subprocess.PIPE,
                              env=env, timeout=120)
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the terminal's other end is closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
    assert proc.returncode == 0
    assert b"\rre-drive: read 2/2, to re-drive 2" in seen
    piped = run_cli(s, "replay", "dlq", s.topics.dlq(s.topics.agent_answers), "--dry-run")
    assert "re-drive: read" not in piped.stderr  # no progress line when not a terminal


async def test_a_run_killed_after_a_batch_resumes_without_duplicates(bootstrap: str) -> None:
    from agents.replay.dlq import Replayer, Tally

    s = test_settings(bootstrap)
    await ensure_topics(s)
    letters = [(f"k{i}".encode(), f'{{"n": {i}}}'.encode(), "schema_error") for i in range(7)]
    await _dead_letters(s, letters)
    dlq = s.topics.dlq(s.topics.agent_answers)

    class Killed(Exception):
        pass

    def die(t: Tally) -> None:  # the process dies right after the first committed batch
        raise Killed

    first = Replayer(s, dlq, None, dry_run=False, batch_size=2)
    with pytest.raises(Killed):
        await first.run(die)
    done = sum(first.tally.redriven.values())
    assert 1 <= done <= 2
    rest = await Replayer(s, dlq, None, dry_run=False, batch_size=2).run()
    assert sum(rest.redriven.values()) == 7 - done
    out = await collect(bootstrap, s.topics.agent_answers, until=7, timeout=20, quiet=1)
    assert sorted(r.value for r in out) == sorted(v for _, v, _ in letters)  # each once
