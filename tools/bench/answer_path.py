"""Which of our modules one answer crosses from Kafka to a judge result, and their lines.

``python -m tools.bench.answer_path [--tree DIR] [--broker embedded|apache] [--worker
detect|judge|both]`` starts a fresh broker and one worker run from the source tree DIR
(default: this one; point it at another checkout to compare), whose Python calls are
recorded (``sys.setprofile`` in every thread) only while one input is handled: a warm-up
input is sent and waited for first, then the measured one, and recording stops when its
output is on the output topic. ``detect``: two disagreeing answers of a new cell until its
job is on the jobs topic. ``judge``: one disagreement job until its result is on the results
topic, the Claude API played by the benchmark's fake (:mod:`tools.bench.judge_fake`, its own
process). Prints the project modules whose code ran in that window (the worker's timers
included) with their lines, the lines of the functions that ran, and the third-party
packages crossed; ``both`` adds the union of the two sides (one answer's whole path).
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
from collections import Counter
from pathlib import Path

import orjson

from streams.settings import Settings
from streams.settings_env import settings_env
from streams.topics import send_all

#: Our packages: a recorded file under one of them counts as a module on the path.
PACKAGES = ("schemas", "streams", "agents", "dashboard", "cli", "tools")
#: The traced worker: records the code objects called between the ``.start`` and ``.stop``
#: files (a thread polls them: Faust's worker owns the signals), then writes them to OUT.
_TRACED = r"""
import os, sys, threading, time, json
OUT = sys.argv[1]
seen, on = set(), [False]
def prof(frame, event, arg):
    if on[0] and event == "call":
        seen.add(frame.f_code)
def watch():
    while not os.path.exists(OUT + ".start"):
        time.sleep(0.01)
    on[0] = True
    while not os.path.exists(OUT + ".stop"):
        time.sleep(0.01)
    on[0] = False
    rows = [(c.co_filename, c.co_name, c.co_firstlineno,
             max((l for _, _, l in c.co_lines() if l), default=c.co_firstlineno))
            for c in list(seen)]
    with open(OUT, "w") as f:
        json.dump(rows, f)
threading.Thread(target=watch, daemon=True).start()
sys.setprofile(prof)
threading.setprofile(prof)
from cli.main import main
sys.exit(main(["worker", sys.argv[2]]))
"""


def _answers(tag: str) -> list[tuple[bytes, bytes]]:
    """A warm-up cell whose agents agree, then a cell whose agents disagree (one job)."""
    out = []
    for patient, second in ((f"W{tag}", True), (f"P{tag}", False)):
        for agent, answer in (("default", True), ("skeptical", second)):
            rec = {"event_id": f"path-{patient}-{agent}", "run_id": f"run-{agent}",
                   "task_id": "path", "patient_id": patient, "field_id": "t2dm_dx",
                   "agent_id": agent, "answer": answer, "confidence": "high",
                   "emitted_at": "2026-01-01T00:00:00Z"}
            out.append((f"path|{patient}|t2dm_dx".encode(), orjson.dumps(rec)))
    return out


def _jobs(n: int) -> list[tuple[bytes, bytes]]:
    from agents.settings import Settings as AgentSettings
    from tools.bench.judge_phase import bench_jobs

    return [(j.key.encode(), j.model_dump_json().encode())
            for j in bench_jobs(AgentSettings(), n, slow=False)]


def record_path(settings: Settings, tree: Path, timeout: float = 120.0,
                extra: dict[str, str] | None = None, worker: str = "detect"
                ) -> list[tuple[str, str, int, int]]:
    """The code objects (file, function, first line, last line) a ``worker`` run from
    ``tree`` called while one input went from its input topic to its output topic."""
    from tools.bench.detect import output_span
    from tools.bench.detect_runs import _fresh

    s = _fresh(settings, 0)
    work = Path(tempfile.mkdtemp(prefix="judgeflow-path-"))
    out = work / "calls.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGEFLOW_")}
    env.update(settings_env(s, reveal_secrets=True))
    env["PYTHONPATH"] = str(tree)
    env.update(extra or {})
    t = s.topics
    if worker == "detect":
        records, topic, warm_out, out_topic = (_answers(work.name[-6:]), t.agent_answers,
                                               t.cell_outcomes, t.judge_jobs)
    else:
        records, topic, warm_out, out_topic = _jobs(2), t.judge_jobs, t.judge_results, \
            t.judge_results
    half = len(records) // 2
    with open(work / "worker.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, "-c", _TRACED, str(out), worker], cwd=tree,
                                env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        try:
            bs = s.kafka
            asyncio.run(send_all(bs, topic, records[:half]))
            asyncio.run(output_span(bs, warm_out, 1, timeout))
            (work / "calls.json.start").touch()
            asyncio.run(send_all(bs, topic, records[half:]))
            asyncio.run(output_span(bs, out_topic, 2 if warm_out == out_topic else 1,
                                    timeout))
            (work / "calls.json.stop").touch()
            deadline = time.monotonic() + timeout
            while not out.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            proc.terminate()
            proc.wait(30)
    return [tuple(row) for row in json.loads(out.read_text())]  # type: ignore[misc]


def report(rows: list[tuple[str, str, int, int]], tree: Path) -> dict[str, object]:
    tree = tree.resolve()
    ours: dict[str, set[tuple[int, int]]] = {}
    packages: Counter[str] = Counter()
    for filename, _, first, last in rows:
        path = Path(filename)
        parts = path.parts
        if "site-packages" in parts:
            top = parts[parts.index("site-packages") + 1]
            packages[top.split(".")[0].split("-")[0]] += 1
            continue
        try:
            rel = path.resolve().relative_to(tree)
        except ValueError:
            packages["stdlib"] += 1
            continue
        if rel.parts[0] in PACKAGES:
            ours.setdefault(str(rel), set()).add((first, last))
    modules = {m: len((tree / m).read_text().splitlines()) for m in sorted(ours)}
    functions = {m: sum(last - first + 1 for first, last in spans) for m, spans in ours.items()}
    return {"modules": len(modules), "lines": sum(modules.values()),
            "function_lines": sum(functions.values()),
            "by_module": {m: [modules[m], functions[m]] for m in modules},
            "third_party": dict(packages.most_common())}


def _side(settings: Settings, tree: Path, extra: dict[str, str], worker: str
          ) -> list[tuple[str, str, int, int]]:
    """One worker's side of the path, printed on its own; the judge's against the fake API."""
    if worker == "detect":
        rows = record_path(settings, tree, extra=extra)
    else:
        from tools.bench.judge_phase import fake_server

        with fake_server(0.01, 0.0) as fake:
            env = {"JUDGEFLOW_LLM__PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": fake.url,
                   "ANTHROPIC_API_KEY": "bench", **extra}
            rows = record_path(settings, tree, extra=env, worker="judge")
    side = report(rows, tree)
    print(f"{worker}: {side['modules']} modules, {side['lines']} lines "
          f"({side['function_lines']} in the functions that ran)")
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.bench.answer_path",
                                description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--tree", type=Path, default=Path.cwd(),
                   help="the source tree the worker runs from (default: the current one)")
    p.add_argument("--broker", choices=("embedded", "apache"), default="embedded")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="an extra environment variable for the worker (repeatable)")
    p.add_argument("--worker", choices=("detect", "judge", "both"), default="both")
    args = p.parse_args(argv)
    from tools.bench.brokers import bench_broker

    base = Settings().model_copy(update={"settle_seconds": 3600.0, "log_level": "WARNING"})
    with bench_broker(args.broker, base) as b:
        if isinstance(b, str):
            print(b)
            return 1
        extra = dict(item.split("=", 1) for item in args.env)
        rows = []
        for worker in ("detect", "judge") if args.worker == "both" else (args.worker,):
            rows += _side(b.settings, args.tree, extra, worker)
    result = report(rows, args.tree)
    for module, (lines, fn_lines) in result["by_module"].items():  # type: ignore[attr-defined]
        print(f"  {module:<44} {lines:>5} lines ({fn_lines} in functions that ran)")
    print(f"{result['modules']} of our modules, {result['lines']} lines "
          f"({result['function_lines']} in the functions that ran); third-party code objects "
          f"by package: {result['third_party']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
