"""The phases of ``judgeflow bench detect``, each against the same-run baselines.

Backlog: N answers are on the input topic before anything starts; the raw aiokafka
passthrough, the forward-only Faust agent and the detect worker each read all of them.
Live (``--live``): a fresh input topic per run; the forward agent and the detect worker are
started first, then the answers are produced while they run. ``--processes K``: K detect
worker processes in one group share a fresh backlog.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import uuid

from streams.settings import Settings
from streams.topics import ensure_topics, send_all
from tools.bench.detect import (
    BenchResult,
    bench_topics,
    create_topic,
    drop_topics,
    passthrough,
    run_worker_until,
    synthetic_answers,
)
from tools.bench.verdict import goal


def _fresh(settings: Settings, input_partitions: int) -> Settings:
    """Settings with a new set of topics and a new detect group (created now)."""
    tag = uuid.uuid4().hex[:6]
    s = settings.model_copy(update={
        "topics": bench_topics(tag),
        "groups": settings.groups.model_copy(update={"detect": f"bench{tag}-detect"})})
    bs = s.kafka
    if input_partitions:
        asyncio.run(create_topic(bs, s.topics.agent_answers, input_partitions))
    asyncio.run(ensure_topics(s, extra=[f"bench{tag}.passthrough", f"bench{tag}.forward"]))
    return s


def _sink(s: Settings, name: str) -> str:
    return s.topics.agent_answers.split(".", 1)[0] + "." + name


def _drop(s: Settings, *, keep: tuple[str, ...] = ()) -> None:
    """Drop what the runs on ``s`` wrote but ``keep``: each run meets the same broker."""
    asyncio.run(drop_topics(s.kafka, s.topics.agent_answers.split(".", 1)[0], keep))


def _after_detect(s: Settings) -> None:
    """Keep the backlog (the next run of the pair reads it) and the forward agent's sink."""
    _drop(s, keep=(s.topics.agent_answers, _sink(s, "forward")))


def _after_forward(s: Settings) -> None:
    """Keep the backlog and the ticks topic the detect worker of the pair needs."""
    asyncio.run(drop_topics(s.kafka, _sink(s, "forward")))


def _show(label: str, r: BenchResult) -> BenchResult:
    print(f"  {label:<34} {r.rate:>9,.0f} events/s ({r.events} in {r.seconds:.2f}s; "
          f"load {os.getloadavg()[0]:.1f})", flush=True)
    return r


def _forward(s: Settings, n: int, timeout: float, live: list[tuple[bytes, bytes]] | None
             ) -> BenchResult:
    sink = _sink(s, "forward")
    return run_worker_until(s, n, sink, timeout, ("tools.bench.faust",
                            s.topics.agent_answers, sink), n, live=live or (),
                            warm_outputs=2 if live else 0)


def _pair(settings: Settings, input_partitions: int, records: list[tuple[bytes, bytes]],
          timeout: float, detect_first: bool) -> tuple[BenchResult, BenchResult]:
    """One more forward-only and detect run, each on a fresh backlog of ``records``."""
    s = _fresh(settings, input_partitions)
    asyncio.run(send_all(s.kafka, s.topics.agent_answers, records))
    n = len(records)
    runs = {}
    for name in ("detect", "forward") if detect_first else ("forward", "detect"):
        if name == "forward":
            runs[name] = _show("Faust forward-only agent", _forward(s, n, timeout, None))
            _after_forward(s)
        else:
            runs[name] = _show("detect worker", run_worker_until(s, n, s.topics.cell_outcomes,
                                                                 timeout))
            _after_detect(s)
    _drop(s)
    return runs["forward"], runs["detect"]


def detect_runs(settings: Settings, events: int, timeout: float, *, input_partitions: int = 0,
                live: bool = False, processes: int = 1, rounds: int = 1) -> dict[str, float]:
    """The phases on the broker ``settings`` point at; returns the backlog ratios.
    ``rounds`` > 1: the forward-only agent and the detect worker run that many times,
    alternating which goes first, and the ratio reported is the median of the rounds'."""
    s = _fresh(settings, input_partitions)
    bs = s.kafka
    records = synthetic_answers(s, events)
    n = len(records)
    print(f"backlog: {n} answers on {s.topics.agent_answers} "
          f"({input_partitions or s.kafka.partitions} partition(s)) on {bs.bootstrap_servers}",
          flush=True)
    asyncio.run(send_all(bs, s.topics.agent_answers, records))
    base = _show("raw passthrough (aiokafka)", asyncio.run(
        passthrough(s, s.topics.agent_answers, _sink(s, "passthrough"), n)))
    asyncio.run(drop_topics(bs, _sink(s, "passthrough")))
    floor = _show("Faust forward-only agent", _forward(s, n, timeout, None))
    _after_forward(s)
    det = _show("detect worker", run_worker_until(s, n, s.topics.cell_outcomes, timeout))
    _drop(s)
    pairs = [(floor, det)]
    for i in range(1, rounds):
        print(f"round {i + 1} of {rounds} (fresh backlog, "
              f"{'detect' if i % 2 else 'forward'} first)", flush=True)
        pairs.append(_pair(settings, input_partitions, records, timeout, detect_first=i % 2 == 1))
    each = [d.rate / f.rate for f, d in pairs]
    ratio = statistics.median(each)
    floor = max((f for f, _ in pairs), key=lambda r: r.rate)
    det = max((d for _, d in pairs), key=lambda r: r.rate)
    if rounds > 1:
        print(f"  detect / Faust forward by round: {', '.join(f'{r:.2f}x' for r in each)}; "
              f"best detect / best forward: {det.rate / floor.rate:.2f}x", flush=True)
    print(f"  detect: {det.rate:,.0f} answers/s in one worker process "
          f"{goal('>= 1,000', det.rate >= 1000)}", flush=True)
    print(f"  detect / Faust forward{' (median)' if rounds > 1 else ''}: {ratio:.2f}x "
          f"{goal('>= 0.6x', round(ratio, 2) >= 0.6)}; "
          f"detect / raw passthrough: {det.rate / base.rate:.3f}; "
          f"forward / raw passthrough: {floor.rate / base.rate:.3f}", flush=True)
    ratios = {"detect/forward": ratio, "detect/raw": det.rate / base.rate,
              "forward/raw": floor.rate / base.rate, "raw ev/s": base.rate,
              "forward ev/s": floor.rate, "detect ev/s": det.rate}
    if live:
        print("live arrival: answers produced while the worker runs", flush=True)
        lf = _show("Faust forward-only agent, live",
                   _forward(_fresh(settings, input_partitions), n, timeout, records))
        s2 = _fresh(settings, input_partitions)
        ld = _show("detect worker, live", run_worker_until(
            s2, n, s2.topics.cell_outcomes, timeout, live=records, warm_outputs=1))
        print(f"  live detect / live Faust forward: {ld.rate / lf.rate:.2f}x", flush=True)
    if processes > 1:
        s3 = _fresh(settings, input_partitions)
        asyncio.run(send_all(bs, s3.topics.agent_answers, records))
        dk = _show(f"detect worker x{processes} processes", run_worker_until(
            s3, n, s3.topics.cell_outcomes, timeout, processes=processes))
        print(f"  {processes} processes / 1 process: {dk.rate / det.rate:.2f}x", flush=True)
    return ratios


def summary(by_broker: dict[str, dict[str, float]]) -> None:
    """One line per broker: the same ratios side by side (each against its own broker)."""
    if len(by_broker) < 2:
        return
    print("ratios by broker (each against baselines on the same broker):", flush=True)
    for label, r in by_broker.items():
        print(f"  {label:<52} detect/forward {r['detect/forward']:.2f}x  "
              f"detect/raw {r['detect/raw']:.3f}  forward/raw {r['forward/raw']:.3f}  "
              f"(raw {r['raw ev/s']:,.0f} ev/s)", flush=True)


def sample_cells(cells: int) -> list[tuple[bytes, bytes]]:
    """``cells`` cells of two answers each, copied from the sample's answers (real evidence,
    rationales and answer spellings) under new patient ids."""
    import orjson

    from streams.sampledata import DATA_DIR

    by_cell: dict[tuple[str, str, str], dict[str, dict[str, object]]] = {}
    for line in (DATA_DIR / "answers.jsonl").read_bytes().splitlines():
        rec = orjson.loads(line)
        by_cell.setdefault((rec["task_id"], rec["patient_id"], rec["field_id"]),
                           {})[rec["agent_id"]] = rec
    pairs = [c for c in by_cell.values() if {"default", "skeptical"} <= c.keys()]
    out: list[tuple[bytes, bytes]] = []
    for i in range(cells):
        pair = pairs[i % len(pairs)]
        for agent in ("default", "skeptical"):
            rec = {**pair[agent], "patient_id": f"M{i:07d}", "event_id": f"mem-{i}-{agent}"}
            key = f"{rec['task_id']}|{rec['patient_id']}|{rec['field_id']}".encode()
            out.append((key, orjson.dumps(rec)))
    return out


def _rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):  # noqa: SIM115 - Linux only, read once
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def memory_run(settings: Settings, cells: int, timeout: float) -> float:
    """RSS of one detect worker per 10,000 open (decided, retained) cells: the growth of
    RSS from after the first round of cells to after the last. Returns MB per 10k cells."""
    import tempfile
    from pathlib import Path

    from tools.bench.detect import output_span
    from tools.subproc import WorkerProcess

    s = _fresh(settings, 0)
    bs = s.kafka
    records = sample_cells(cells)
    log = Path(tempfile.mkdtemp(prefix="judgeflow-bench-")) / "worker.log"
    chunk = 2 * min(2000, cells)  # records per round: a steady flow, not one huge backlog
    with WorkerProcess("detect", s, log) as proc:
        asyncio.run(send_all(bs, s.topics.agent_answers, records[:chunk]))
        asyncio.run(output_span(bs, s.topics.cell_outcomes, chunk // 2, timeout))
        before = _rss_mb(proc.proc.pid)
        for i in range(chunk, len(records), chunk):
            asyncio.run(send_all(bs, s.topics.agent_answers, records[i:i + chunk]))
            asyncio.run(output_span(bs, s.topics.cell_outcomes, (i + chunk) // 2, timeout))
        after = _rss_mb(proc.proc.pid)
        proc.stop()
    cells = len(records) // 2 - chunk // 2
    per10k = (after - before) * 10_000 / cells
    print(f"  detect worker RSS: {before:.0f} MB after {chunk // 2} cells, {after:.0f} MB "
          f"after {cells} more open cells: {per10k:.1f} MB per 10,000 open cells "
          f"{goal('<= 20 MB', round(per10k, 1) <= 20)} (load {os.getloadavg()[0]:.1f})", flush=True)
    return per10k
