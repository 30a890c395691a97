"""``python -m tools.demo.model_choice``: docs/replay.md's "Choosing a model by evidence" walk,
offline: the embedded broker, the detect and judge workers on the sample, the fake Claude
API answering as :class:`tools.fakes.fake_sample_judge.SampleJudge` (it agrees with the
sample's reviewers, except that as Haiku it blames the wrong agent on ``ckd_stage``),
then a replay that moves two criteria to Haiku and ``judgeflow compare``. Prints each
command and its output, as docs/replay.md shows them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agents.settings import Settings
from cli.produce import produce
from streams import event_loop
from streams.sampledata import DATA_DIR
from streams.topics import ensure_topics, read_to_end
from tools.broker import EmbeddedBroker
from tools.fakes.fake_anthropic import FakeAnthropic
from tools.fakes.fake_sample_judge import SampleJudge
from tools.subproc import WorkerProcess, settings_env

MOVE = {"latest_egfr": {"model": "claude-haiku-5-5"}, "ckd_stage": {"model": "claude-haiku-5-5"}}


async def _count(s: Settings, topic: str) -> int:
    return sum([1 async for _ in read_to_end(s.kafka.bootstrap_servers, [topic])])


async def _judged(s: Settings, timeout: float) -> int:
    """Wait until every job on the jobs topic has a result (and no new job came for a
    while); returns the number of jobs."""
    deadline, last, steady = time.monotonic() + timeout, -1, 0.0
    while time.monotonic() < deadline:
        jobs = await _count(s, s.topics.judge_jobs)
        results = await _count(s, s.topics.judge_results)
        if jobs and results >= jobs and jobs == last:
            if time.monotonic() - steady > s.settle_seconds + 2:
                return jobs
        else:
            steady = time.monotonic()
        last = jobs
        await asyncio.sleep(1.0)
    raise TimeoutError("the judge did not finish the sample in time")


def _cli(s: Settings, *args: str, extra: dict[str, str] | None = None) -> str:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("JUDGEFLOW_")},
           **settings_env(s), **(extra or {})}
    shown = " ".join(f"{k}='{v}'" for k, v in (extra or {}).items())
    print(f"\n$ {shown + ' ' if shown else ''}judgeflow {' '.join(args)}", flush=True)
    proc = subprocess.run([sys.executable, "-m", "cli.main", *args], env=env,
                          capture_output=True, text=True, timeout=600)
    print(proc.stdout.rstrip(), flush=True)
    if proc.returncode != 0:
        print(proc.stderr.rstrip(), file=sys.stderr)
        raise SystemExit(proc.returncode)
    return proc.stdout


def main() -> None:
    argparse.ArgumentParser(description=__doc__).parse_args()
    work = Path(tempfile.mkdtemp(prefix="judgeflow-model-choice-"))
    with EmbeddedBroker(data_dir=work / "broker") as broker, \
            FakeAnthropic(responder=SampleJudge(hard=frozenset({"ckd_stage"}))) as fake:
        os.environ.update(ANTHROPIC_BASE_URL=fake.base_url, ANTHROPIC_API_KEY="fake-api")
        base = Settings()
        s = base.model_copy(update={
            "kafka": base.kafka.model_copy(update={"bootstrap_servers": broker.bootstrap,
                                                   "idle_fetch_backoff_ms": 50,
                                                   "evict_dead_members": True}),
            "llm": base.llm.model_copy(update={"provider": "anthropic",
                                               "model": "claude-sonnet-5-5"}),
            "settle_seconds": 3.0, "state_dir": work / "state"})
        event_loop.run(ensure_topics(s))
        procs = [WorkerProcess(n, s, work / f"{n}.log") for n in ("detect", "judge")]
        try:
            for topic, name in ((s.topics.agent_answers, "answers.jsonl"),
                                (s.topics.adjudications, "adjudications.jsonl")):
                lines = (DATA_DIR / name).read_bytes().splitlines()
                event_loop.run(produce(s, topic, lines, False))
            jobs = event_loop.run(_judged(s, 300))
            print(f"(the sample's {jobs} judge jobs judged by claude-sonnet-5-5 against the "
                  "fake API)", flush=True)
        finally:
            for p in procs:
                p.stop()
        _cli(s, "replay", "judge",
             extra={"JUDGEFLOW_LLM__CRITERION_MODELS": json.dumps(MOVE)})
        _cli(s, "compare")


if __name__ == "__main__":
    main()
