"""Text output of ``judgeflow demo``: progress lines and the final summary tables."""

from __future__ import annotations

from collections import Counter
from typing import Any

import orjson

from agents.calibrate.compare import table
from agents.judge.versioning import TYPEDRIFT_LABEL
from schemas.reviewer_labels import name_agents
from streams.settings import Settings
from tools.demo.tally import Expect, Seen


def progress_line(seen: Seen, expect: Expect, final: bool) -> str:
    word = "complete" if final else "progress"
    return (f"  {word}: cells decided {len(seen.outcomes)}/{expect.cells}, judge jobs "
            f"{len(seen.jobs)}, judge results {len(seen.results)}/{len(seen.jobs)}, "
            f"evaluations {len(seen.evaluations)}/{expect.requests}, "
            f"dead letters {sum(seen.dead.values())}")


def _rate(f: dict[str, Any]) -> str:
    return f"{f['hits']}/{f['n']}" + (f" {f['rate']:.0%}" if f["n"] else "")


def answer_text(value: Any) -> str:
    """A suggested answer in full: a list as its items, text without JSON quotes."""
    if isinstance(value, list):
        return "[" + ", ".join(answer_text(v) for v in value) + "]"
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def correct_text(result: dict[str, Any]) -> str:
    """Who the judge found right, by agent id (``default``, not ``agent_a``)."""
    named = result.get("correct_agents")
    if named is not None:
        return "+".join(named) or "neither"
    label = result["analysis"]["agent_correctness"]
    return name_agents(label, result.get("agents") or ()) or "-"


def truth_match(seen: Seen) -> str:
    from streams.sampledata import DATA_DIR

    truth = [orjson.loads(x) for x in (DATA_DIR / "truth.jsonl").read_bytes().splitlines()]
    kinds: dict[str, set[str]] = {}
    for job in seen.jobs.values():
        cell = f"{job['task_id']}|{job['patient_id']}|{job['field_id']}"
        kinds.setdefault(cell, set()).add(job["kind"])
    ok = sum(1 for t in truth if sorted(kinds.get(t["cell"], ())) == t["job_kinds"]
             and seen.outcomes.get(t["cell"], {}).get("outcome") == t["outcome"])
    return f"ground truth: {ok}/{len(truth)} cells match (outcome and job kinds)"


def report(seen: Seen, s: Settings, out: Any, topic_prefix: str = "") -> None:
    """The summary; topics are named without the run's ``topic_prefix`` (a user's cluster),
    so that it reads the same on every broker."""
    outcomes = Counter(o["outcome"] for o in seen.outcomes.values())
    print(table("Cells by outcome", sorted(outcomes.items()), ("outcome", "cells")), file=out)
    kinds = Counter(j["kind"] for j in seen.jobs.values())
    print(table("Judge jobs by kind", sorted(kinds.items()), ("kind", "jobs")), file=out)
    print("  " + truth_match(seen), file=out)
    dead = [(topic.removeprefix(topic_prefix), etype, n)
            for (topic, etype), n in sorted(seen.dead.items())]
    print(table("Dead letters", [tuple(map(str, d)) for d in dead] or [("-", "-", "0")],
                ("topic", "error.type", "records")), file=out)
    results = sorted(seen.results.values(), key=lambda r: (r["kind"], r["patient_id"],
                                                           r["field_id"]))
    rows = [(r["patient_id"], r["field_id"], r["kind"], r["status"],
             answer_text(r["analysis"]["suggested_answer"]),
             correct_text(r), r["analysis"]["judge_confidence"])
            for r in results]
    print(table(f"Judge results ({len(rows)})", rows,
                ("patient", "criterion", "kind", "status", "suggested", "correct", "confidence")),
          file=out)
    status = Counter(r["status"] for r in results)
    usage = [r.get("usage", {}) for r in results]
    cost = sum(u.get("cost_usd", 0.0) for u in usage)
    calls = sum(u.get("llm_calls", 0) for u in usage)
    print(f"  status: {dict(status)}; LLM calls {calls}; cost ${cost:.4f}", file=out)
    # type drift is settled in code from the schema: its series has nothing to calibrate
    cal = sorted((c for c in seen.calibration.values()
                  if not c["prompt_version"].startswith(TYPEDRIFT_LABEL + "+")),
                 key=lambda c: (c["field_id"], c["prompt_version"]))
    print(table("Judge vs sample adjudications (accuracy and kappa over adjudicated cells)", [(
        c["field_id"], c["prompt_version"], c["cells_judged"], c["cells_adjudicated"],
        _rate(c["answer_accuracy"]), "-" if c["classification_kappa"] is None
        else f"{c['classification_kappa']:.2f}", _rate(c["fallback"]))
        for c in cal] or [("-",) * 7], ("criterion", "version", "judged", "adjudicated",
                                        "accuracy", "kappa", "fallbacks")), file=out)
    try:
        from agents.debrief.summary import summarize
    except ImportError:  # pragma: no cover - the debrief package ships with judgeflow
        return
    lines = [summarize(ev) for _, ev in sorted(seen.evaluations.items())]
    print(f"\nDebrief evaluations ({len(lines)})", file=out)
    for line in lines:
        print("  " + line, file=out)
