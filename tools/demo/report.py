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


def _rate(f: dict[str, Any] | None) -> str:
    """``3/4 75% [30%, 95%]``: the count, the rate and its 95% interval (when it has one)."""
    if not f:
        return "-"
    ci = f.get("ci95")
    return (f"{f['hits']}/{f['n']}" + (f" {f['rate']:.0%}" if f["n"] else "")
            + (f" [{ci[0]:.0%}, {ci[1]:.0%}]" if ci else ""))


def _coef(x: float | None, ci: list[float] | None = None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _mode(c: dict[str, Any], mode: str) -> str:
    modes = c.get("by_review_mode") or {}
    return _rate((modes.get(mode) or {}).get("answer_accuracy")) if modes else "-"


def _diff(c: dict[str, Any]) -> str:
    d = (c.get("by_review_mode") or {}).get("verify_minus_blind") or {}
    if d.get("estimate") is None:
        return "-"
    ci = d.get("ci95")
    return f"{d['estimate']:+.0%}" + (f" [{ci[0]:+.0%}, {ci[1]:+.0%}]" if ci else "")


def pooled(cal: list[dict[str, Any]]) -> dict[str, Any]:
    """Answer agreement pooled over criteria (counts add; kappa and AC1 do not pool across
    criteria with different label sets): judge vs reviewer on blind and on verify cells, and
    reviewer vs reviewer, each with its Wilson interval; verify minus blind (Newcombe).
    The human baseline counts each criterion once (every version's record repeats it)."""
    from agents.calibrate.figures import figure, newcombe
    from agents.calibrate.metrics import Ratio

    sums = {"blind": [0, 0], "verify": [0, 0], "human": [0, 0]}
    seen: set[tuple[str, str]] = set()
    for c in cal:
        for mode in ("blind", "verify"):
            f = ((c.get("by_review_mode") or {}).get(mode) or {}).get("answer_accuracy")
            if f:
                sums[mode][0] += f["hits"]
                sums[mode][1] += f["n"]
        human = c.get("human_agreement")
        if human and (c["task_id"], c["field_id"]) not in seen:
            seen.add((c["task_id"], c["field_id"]))
            sums["human"][0] += human["percent"]["hits"]
            sums["human"][1] += human["percent"]["n"]
    out: dict[str, Any] = {k: figure(Ratio(*v)).model_dump() for k, v in sums.items()}
    out["verify_minus_blind"] = newcombe(Ratio(*sums["verify"]), Ratio(*sums["blind"])
                                         ).model_dump()
    return out


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
    print(table("Judge vs sample adjudications (accuracy, kappa and AC1 over adjudicated "
                "cells; [95% intervals])", [(
                    c["field_id"], c["prompt_version"], c["cells_judged"],
                    c["cells_adjudicated"], _rate(c["answer_accuracy"]),
                    _coef(c["classification_kappa"], c.get("kappa_ci95")),
                    _coef(c.get("ac1")), _rate(c["fallback"]))
                    for c in cal] or [("-",) * 8],
                ("criterion", "version", "judged", "adjudicated", "accuracy", "kappa", "AC1",
                 "fallbacks")), file=out)
    human = {c["field_id"]: c.get("human_agreement") for c in cal}
    print(table("Blind audit and the human baseline (answer accuracy of the judge on blind "
                "and on verify cells; reviewer vs reviewer on double-reviewed cells)", [(
                    c["field_id"], c["prompt_version"], _mode(c, "blind"), _mode(c, "verify"),
                    _diff(c), _rate((human[c["field_id"]] or {}).get("percent")),
                    _coef((human[c["field_id"]] or {}).get("kappa"),
                          (human[c["field_id"]] or {}).get("kappa_ci95")),
                    _coef((human[c["field_id"]] or {}).get("ac1")))
                    for c in cal] or [("-",) * 8],
                ("criterion", "version", "blind", "verify", "verify - blind",
                 "human agree", "human kappa", "human AC1")), file=out)
    if cal:
        p = pooled(cal)
        print(f"  all criteria, pooled: judge vs reviewer on blind cells {_rate(p['blind'])}, "
              f"on verify cells {_rate(p['verify'])}, verify - blind "
              f"{_diff({'by_review_mode': p})}; reviewer vs reviewer {_rate(p['human'])}",
              file=out)
    try:
        from agents.debrief.summary import summarize
    except ImportError:  # pragma: no cover - the debrief package ships with judgeflow
        return
    lines = [summarize(ev) for _, ev in sorted(seen.evaluations.items())]
    print(f"\nDebrief evaluations ({len(lines)})", file=out)
    for line in lines:
        print("  " + line, file=out)
