"""``judgeflow demo``: the whole pipeline on a Kafka cluster with the bundled samples.

Starts noida-db on a free loopback port (or Apache Kafka, or uses the configured cluster
under a fresh topic prefix: :mod:`tools.demo.target`), the detect, judge and debrief workers
as child processes (exactly as ``judgeflow worker ...`` runs them), produces the sample answers
(plus the malformed ones) and debrief requests, follows the output topics with progress
lines, prints a summary and stops everything it started.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from agents.debrief.sampledata import REQUESTS_FILE
from agents.settings import Settings
from streams import event_loop, kafka_clients
from streams.exit_codes import CommandError, ExitCode
from streams.kafka_settings import KafkaSettings
from streams.sampledata import DATA_DIR
from streams.topics import assign_all, ensure_topics
from tools.demo.audit import DEMO_BLIND, DEMO_DOUBLE, agent_answers, audited
from tools.demo.tally import Expect, Seen
from tools.demo.target import (
    Kind,
    Target,
    choose,
    claim,
    open_target,
    own_broker_kafka,
    pointed,
    prefixed,
    tidy,
)
from tools.subproc import WorkerProcess, stop_all

WORKERS = ("detect", "judge", "debrief", "calibrate")
#: what cli.demo needs from the target choice, through its one listed import of tools.demo
__all__ = ["choose", "demo_settings", "expectations", "follow", "input_batches", "pointed",
           "run", "workers"]


def demo_settings(settings: Settings, kafka: KafkaSettings | str, state_dir: Path,
                  settle: float, offline: bool, prefix: str = "") -> Settings:
    """The demo's settings: ``kafka`` is the cluster's settings, or the address of a broker
    the demo started; ``prefix`` names its topics and groups on a cluster it does not own."""
    use_claude = bool(os.environ.get("ANTHROPIC_API_KEY")) and not offline
    # the client factory recognises the embedded broker and applies its work-arounds itself
    if isinstance(kafka, str):
        kafka = own_broker_kafka(settings.kafka, kafka)
    llm = settings.llm.model_copy(update={"provider": "anthropic" if use_claude else "offline"})
    # the review page and the sample's adjudications share one audit plan (tools.demo.audit)
    review = settings.review.model_copy(update={"blind_share": DEMO_BLIND,
                                                "double_share": DEMO_DOUBLE})
    s = settings.model_copy(update={"kafka": kafka, "llm": llm, "settle_seconds": settle,
                                    "state_dir": state_dir, "review": review,
                                    **sample_catalogue()})
    return prefixed(s, prefix) if prefix else s


def sample_catalogue() -> dict[str, tuple[str, ...]]:
    """The tasks and cases the demo's input holds, as the judge's ``tasks`` and the debrief's
    ``debrief_cases``: the workers then run as a deployment should (paying for nothing
    else), not with the pay-for-anything default."""
    def ids(path: Path, field: str) -> tuple[str, ...]:
        return tuple(sorted({orjson.loads(line)[field] for line in
                             path.read_bytes().splitlines() if line.strip()}))

    return {"tasks": ids(DATA_DIR / "answers.jsonl", "task_id"),
            "debrief_cases": ids(REQUESTS_FILE, "case_id")}


def input_batches(s: Settings) -> Iterator[tuple[str, Path, bool]]:
    yield s.topics.agent_answers, DATA_DIR / "answers.jsonl", False
    yield s.topics.agent_answers, DATA_DIR / "answers.malformed.jsonl", True
    yield s.topics.debrief_requests, REQUESTS_FILE, False
    yield s.topics.adjudications, DATA_DIR / "adjudications.jsonl", False


def held_back(line: bytes) -> bool:
    """``demo --dashboard`` leaves a third of the sample's cells to the reviewer: the
    adjudications of every third patient (P003, P006, ...) are not sent."""
    patient = str(orjson.loads(line).get("patient_id", ""))
    return patient[1:].isdigit() and int(patient[1:]) % 3 == 0


def lines_of(s: Settings, topic: str, path: Path, hold_back: bool) -> list[bytes]:
    lines = path.read_bytes().splitlines()
    if topic == s.topics.adjudications:  # blind cells marked, double ones reviewed twice
        from streams.sampledata import DATA_DIR

        answers = agent_answers((DATA_DIR / "answers.jsonl").read_bytes().splitlines())
        return audited([ln for ln in lines if ln.strip() and not (
            hold_back and held_back(ln))], answers)
    return lines


def expectations() -> Expect:
    from agents.debrief.sampledata import REQUESTS_FILE
    from streams.sampledata import DATA_DIR

    cells = len((DATA_DIR / "truth.jsonl").read_bytes().splitlines())
    requests = len([ln for ln in REQUESTS_FILE.read_bytes().splitlines() if ln.strip()])
    return Expect(cells, requests)


def absorb(s: Settings, seen: Seen, rec: Any) -> None:
    t = s.topics
    if rec.topic.endswith(".dlq"):
        headers = {k: v.decode("utf-8", "replace") for k, v in rec.headers or ()}
        seen.dead[(rec.topic, headers.get("error.type", "?"))] += 1
        return
    value = orjson.loads(rec.value)
    if rec.topic == t.cell_outcomes:
        seen.outcomes[rec.key.decode()] = value
    elif rec.topic == t.judge_jobs:
        seen.jobs[value["job_id"]] = value
    elif rec.topic == t.judge_results:
        seen.results[value["job_id"]] = value
    elif rec.topic == t.case_evaluations:
        seen.evaluations[value["request_id"]] = value
    elif rec.topic == t.calibration:
        seen.calibration[rec.key.decode()] = value


def calibrated(seen: Seen) -> bool:
    """Every judged (task, criterion, version) has a calibration record covering its cells."""
    cells: dict[str, set[str]] = {}
    for r in seen.results.values():
        key = f"{r['task_id']}|{r['field_id']}|{r['prompt_version']}"
        cells.setdefault(key, set()).add(r["patient_id"])
    return all(seen.calibration.get(k, {}).get("cells_judged", -1) >= len(v)
               for k, v in cells.items())


def complete(seen: Seen, expect: Expect, s: Settings) -> bool:
    debrief_dead = sum(n for (topic, _), n in seen.dead.items()
                       if topic == s.topics.dlq(s.topics.debrief_requests))
    return (len(seen.outcomes) >= expect.cells and bool(seen.jobs)
            and set(seen.jobs) <= set(seen.results)
            and len(seen.evaluations) + debrief_dead >= expect.requests
            and calibrated(seen))


async def follow(s: Settings, expect: Expect, timeout: float, progress: Any,
                 died: Callable[[], bool] = lambda: False) -> tuple[Seen, bool]:
    """Follow the output topics until the run is complete, ``timeout`` passed, or ``died()``
    says a worker exited (the rest would only wait for it)."""
    t = s.topics
    topics = [t.cell_outcomes, t.judge_jobs, t.judge_results, t.case_evaluations, t.calibration,
              t.dlq(t.agent_answers), t.dlq(t.judge_jobs), t.dlq(t.debrief_requests)]
    consumer = kafka_clients.consumer(s.kafka, enable_auto_commit=False)
    await consumer.start()
    seen = Seen()
    try:
        tps = await assign_all(consumer, topics)
        await consumer.seek_to_beginning(*tps)
        deadline = time.monotonic() + timeout
        last = 0.0
        while time.monotonic() < deadline and not died():
            batch = await consumer.getmany(timeout_ms=300, max_records=2000)
            for records in batch.values():
                for rec in records:
                    absorb(s, seen, rec)
            if complete(seen, expect, s):
                progress(seen, expect, final=True)
                return seen, True
            if time.monotonic() - last >= 2.0:
                progress(seen, expect, final=False)
                last = time.monotonic()
        return seen, False
    finally:
        await consumer.stop()


@contextlib.contextmanager
def workers(s: Settings, log_dir: Path) -> Iterator[list[WorkerProcess]]:
    procs = [WorkerProcess(name, s, log_dir / f"{name}.log") for name in WORKERS]
    try:
        yield procs
    finally:
        stop_all(procs)


def run(settings: Settings, *, settle: float, timeout: float, offline: bool,
        out: Any, produce_fn: Any, hold_fn: Any = None, work_dir: Path | None = None,
        keep_logs: bool = True, broker: Kind = "embedded", topic_prefix: str | None = None,
        keep_topics: bool = False) -> int:
    work = work_dir or Path(tempfile.mkdtemp(prefix="judgeflow-demo-"))
    logs = f" (logs in {work})" if keep_logs else ""

    def note(what: str) -> None:
        print(f"judgeflow demo: {what}{logs}", file=out, flush=True)

    with open_target(broker, settings, work, topic_prefix, note) as target:
        s = demo_settings(settings, target.kafka, work / "state", settle, offline,
                          prefix=target.prefix)
        event_loop.run(claim(target, s))  # a refused login or a taken prefix: one line
        if not target.owned:
            note(f"running on {target.describe}")
        try:
            code = _pipeline(s, target, settle, timeout, out, produce_fn, hold_fn, work)
        finally:
            if not target.owned and not keep_topics:
                print(f"  on {s.kafka.bootstrap_servers}: {_tidy(target, s)}", file=out,
                      flush=True)
            elif not target.owned:
                print(f"  left on {s.kafka.bootstrap_servers} (--keep-topics): the topics and "
                      f"consumer groups under {target.prefix}; delete them when done",
                      file=out, flush=True)
        target.failed = code != 0
    if code == 0:
        print(f"\njudgeflow demo: done.{f' Worker logs: {work}' if keep_logs else ''}",
              file=out, flush=True)
        if hold_fn is None:
            print("  To review these results in the browser (queue, evidence, calibration): "
                  "judgeflow demo --dashboard", file=out, flush=True)
    return code


def _tidy(target: Target, s: Settings) -> str:
    try:
        return event_loop.run(tidy(target, s))
    except Exception as exc:  # the cluster went away meanwhile: say what is left
        return (f"could NOT delete the topics and groups under {target.prefix} "
                f"({type(exc).__name__}: {exc}); delete them by hand")


def _pipeline(s: Settings, target: Target, settle: float, timeout: float, out: Any,
              produce_fn: Any, hold_fn: Any, work: Path) -> int:
    """Topics, workers, the sample input, following until complete, the summary."""
    from tools.demo.report import progress_line, report

    where = f"on the {target.describe}; " if target.owned else ""
    print(f"  {where}LLM provider: {s.llm.provider}"
          f"{' (' + s.llm.model + ')' if s.llm.provider == 'anthropic' else ''}",
          file=out, flush=True)
    event_loop.run(ensure_topics(s))
    expect = expectations()
    with workers(s, work) as procs:
        for topic, path, raw in input_batches(s):
            lines = lines_of(s, topic, path, hold_fn is not None)
            sent, rejected = event_loop.run(produce_fn(s, topic, lines, raw))
            kept = len(path.read_bytes().splitlines()) - len(
                [ln for ln in lines if b'"review_slot":2' not in ln])
            print(f"  produced {sent} record(s) from {path.name} to {topic}"
                  f"{f' ({rejected} rejected)' if rejected else ''}"
                  f"{f' ({kept} held back for you to decide on the page)' if kept else ''}",
                  file=out, flush=True)
        started = time.monotonic()
        seen, ok = event_loop.run(follow(s, expect, timeout,
                                      lambda se, ex, final: print(
                                          progress_line(se, ex, final), file=out,
                                          flush=True),
                                      died=lambda: any(not p.alive for p in procs)))
        dead = [p for p in procs if not p.alive]
        reasons = [f"{p.name} worker {p.exit_reason()}" for p in dead]
        if not dead:
            report(seen, s, out, topic_prefix=target.prefix)
        if not dead and ok and hold_fn is not None:
            # `--dashboard`: the page over the demo's topics until Ctrl-C, the workers still
            # running, so the reviewer's decisions move the calibration view
            hold_fn(s, work)
    if dead:  # the tables would only show what the dead worker never produced
        # the reason is an error: one `judgeflow:` line on stderr through the one map
        raise CommandError(f"demo: stopped after {time.monotonic() - started:.0f}s: "
                           f"{'; '.join(reasons)}. Worker logs: {work}", ExitCode.FAILURE)
    if not ok:
        raise CommandError(f"demo: incomplete after {timeout:.0f}s. Worker logs: {work}",
                           ExitCode.FAILURE)
    return ExitCode.OK
