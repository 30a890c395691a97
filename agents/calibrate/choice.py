"""Whether a criterion may move to a cheaper model: a non-inferiority decision that respects
n (pure; docs/calibration.md, "Choosing a model").

Per criterion, the **reference** is the series judged by the current model (the configured
``llm.model``; else the costliest LLM series) and every cheaper LLM series judged on the same
cells is a **candidate**. Both are scored on the cells both judged, that a reviewer
adjudicated and that neither answered with a fallback (paired: the same cells). The
difference candidate minus reference in answer accuracy gets Newcombe's hybrid score 95%
interval. It treats the two as independent samples, which on the same cells (positively
correlated) makes it wider than a paired interval: the rule errs toward keeping the current
model. Verdicts:

* ``not enough cells``: fewer than ``min_cells`` such cells;
* ``move``: the interval's lower end is above ``-margin`` (the cheaper model is not worse by
  more than the margin, at 95%);
* ``keep``: otherwise (the cheaper model may be worse by more than the margin).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.calibrate.core import Calibration, Group, same_answer
from agents.calibrate.figures import newcombe
from agents.calibrate.metrics import Ratio

#: Series not judged by a model (type drift resolved by the answer schema): never candidates.
NOT_A_MODEL = frozenset({"answer-schema", "-"})


def paired(cal: Calibration, ref: Group, cand: Group) -> tuple[Ratio, Ratio]:
    """Answer accuracy of the two series on the cells both judged (no fallback) and a
    reviewer adjudicated."""
    a, b = cal.results_of(ref), cal.results_of(cand)
    schema = cal.schemas.get(ref[1])
    cells = sorted(c for c in set(a) & set(b) & set(cal.adjudications)
                   if a[c].status != "fallback" and b[c].status != "fallback")

    def hits(results: dict[str, Any]) -> int:
        return sum(1 for c in cells if results[c].analysis.suggested_answer is not None
                   and same_answer(results[c].analysis.suggested_answer,
                                   cal.adjudications[c].final_answer, schema))
    return Ratio(hits(a), len(cells)), Ratio(hits(b), len(cells))


def recommend(cal: Calibration, series: Sequence[dict[str, Any]], current_model: str | None,
              min_cells: int, margin: float) -> list[dict[str, Any]]:
    """One verdict per (criterion, cheaper candidate series); ``series``: by_model's rows."""
    out = []
    by_criterion: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in series:
        if row["model"] not in NOT_A_MODEL and row["usd_per_1000_cells"] is not None:
            by_criterion.setdefault((row["task_id"], row["field_id"]), []).append(row)
    for (task, field), rows in sorted(by_criterion.items()):
        current = [r for r in rows if r["model"] == current_model]
        ref = max(current or rows, key=lambda r: (r["usd_per_1000_cells"], r["prompt_version"]))
        for cand in sorted(rows, key=lambda r: r["usd_per_1000_cells"]):
            if cand is ref or cand["usd_per_1000_cells"] >= ref["usd_per_1000_cells"]:
                continue
            r_acc, c_acc = paired(cal, (task, field, ref["prompt_version"]),
                                  (task, field, cand["prompt_version"]))
            diff = newcombe(c_acc, r_acc)
            if r_acc.n < min_cells:
                verdict = "not enough cells"
                why = f"{r_acc.n} paired cells, fewer than {min_cells}"
            elif diff.ci95 is not None and diff.ci95[0] > -margin:
                verdict = "move"
                why = (f"not worse by more than {margin:.0%} "
                       f"(95% CI of the difference {diff.ci95[0]:+.0%} to {diff.ci95[1]:+.0%})")
            else:
                verdict = "keep"
                low = diff.ci95[0] if diff.ci95 else -1.0
                why = f"may be worse by up to {-low:.0%} (more than the {margin:.0%} margin)"
            out.append({"task_id": task, "field_id": field, "reference": ref["model"],
                        "reference_version": ref["prompt_version"], "candidate": cand["model"],
                        "candidate_version": cand["prompt_version"],
                        "reference_accuracy": r_acc.__dict__, "candidate_accuracy":
                        c_acc.__dict__, "difference": diff.model_dump(mode="json"),
                        "verdict": verdict, "why": why})
    return out


def render(recs: Sequence[dict[str, Any]], min_cells: int, margin: float) -> str:
    if not recs:
        return "\nno criterion has a cheaper model judged on the same cells"
    lines = [f"\n\nmoving a criterion to a cheaper model (non-inferiority on answer accuracy, "
             f"margin {margin:.0%}, at least {min_cells} paired adjudicated cells):"]
    for r in recs:
        ref, cand = r["reference_accuracy"], r["candidate_accuracy"]
        word = {"move": f"MOVE to {r['candidate']}", "keep": f"KEEP {r['reference']}"}.get(
            r["verdict"], "NOT ENOUGH CELLS")
        lines.append(f"  {r['task_id']}/{r['field_id']}: {word}: {r['candidate']} "
                     f"{cand['hits']}/{cand['n']} vs {r['reference']} "
                     f"{ref['hits']}/{ref['n']}; {r['why']}")
    return "\n".join(lines)
