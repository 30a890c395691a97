"""Two prompt versions side by side against the human adjudications (pure).

Per criterion: adjudicated cells, answer accuracy, classification kappa, changed suggestions
(cells judged under both versions whose suggested answer differs), fallbacks and cost per
cell; plus totals pooled over criteria (accuracy, fallbacks, cost; kappa is per criterion
only, since pooling it across criteria would mix different label frequencies).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agents.calibrate.choice import recommend
from agents.calibrate.choice import render as render_choice
from agents.calibrate.core import Calibration, figure
from agents.calibrate.metrics import Ratio
from schemas.calibration import CalibrationRecord, Figure

HEADERS = ("criterion", "adjudicated", "accuracy", "kappa", "changed", "fallbacks",
           "USD/cell")


class AmbiguousVersion(ValueError):
    """A prefix that starts more than one known prompt version."""


def resolve_version(given: str, known: Sequence[str]) -> str:
    """The known version ``given`` names: itself, or the only one it is a prefix of
    (``judge-v3+2817`` for ``judge-v3+281779b55609``). Unknown: ``given`` unchanged (the
    caller says there are no results under it). :class:`AmbiguousVersion` names the matches."""
    if given in known:
        return given
    matches = sorted(v for v in set(known) if v.startswith(given))
    if len(matches) > 1:
        raise AmbiguousVersion(f"{given!r} is the start of {len(matches)} versions: "
                               f"{', '.join(matches)}")
    return matches[0] if matches else given


def table(title: str, rows: Sequence[Sequence[object]], headers: tuple[str, ...]) -> str:
    """A plain-text table (the compare command and the demo report print these)."""
    widths = [max(len(str(c)) for c in col) for col in zip(headers, *rows, strict=False)]
    line = "  ".join("-" * w for w in widths)
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    body = [fmt.format(*headers), line] + [fmt.format(*map(str, r)) for r in rows]
    return f"\n{title}\n" + "\n".join("  " + b for b in body)


def _pair(old: Any, new: Any, fmt: str = "{}") -> str:
    def one(v: Any) -> str:
        return "-" if v is None else fmt.format(v)
    return f"{one(old)} -> {one(new)}"


def _ratio(f: Figure | None) -> str | None:
    """``2/3 67% [21%, 94%]``: the count, the rate and its Wilson 95% interval."""
    if f is None or f.n == 0:
        return None
    ci = f" [{f.ci95[0]:.0%}, {f.ci95[1]:.0%}]" if f.ci95 else ""
    return f"{f.hits}/{f.n} {f.rate:.0%}{ci}"


def _coef(x: float | None, ci: tuple[float, float] | None = None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")


def _enough(n: int, min_cells: int) -> str:
    return "" if n >= min_cells else " (not enough cells)"


@dataclass
class _Totals:
    right: int = 0
    scored: int = 0
    fallbacks: int = 0
    judged: int = 0
    cost: float = 0.0

    def add(self, rec: CalibrationRecord) -> None:
        self.right += rec.answer_accuracy.hits
        self.scored += rec.answer_accuracy.n
        self.fallbacks += rec.fallback.hits
        self.judged += rec.cells_judged
        self.cost += rec.cost_usd

    def to_json(self) -> dict[str, Any]:
        return {"answer_accuracy": figure(Ratio(self.right, self.scored)).model_dump(),
                "fallback": figure(Ratio(self.fallbacks, self.judged)).model_dump(),
                "cost_usd": round(self.cost, 8), "cells_judged": self.judged}


def compare(cal: Calibration, old: str, new: str, now: datetime,
            min_cells: int = 1) -> dict[str, Any]:
    """The comparison as plain JSON-ready data."""
    criteria = sorted({(t, f) for t, f, v in cal.groups() if v in (old, new)})
    rows, totals = [], {"old": _Totals(), "new": _Totals()}
    for task, field in criteria:
        row: dict[str, Any] = {"task_id": task, "field_id": field}
        for side, v in (("old", old), ("new", new)):
            rec = None
            if v in cal.versions.get((task, field), ()):
                rec = cal.record((task, field, v), now)
                totals[side].add(rec)
            row[side] = None if rec is None else rec.model_dump(mode="json")
        changed = cal.changed_suggestions((task, field, old), (task, field, new))
        row["changed_suggestions"] = figure(changed).model_dump()
        rows.append(row)
    return {"old": old, "new": new, "criteria": rows, "min_cells": min_cells,
            "totals": {side: t.to_json() for side, t in totals.items()}}


def render(data: dict[str, Any]) -> str:
    """The comparison as a text table (old -> new in every cell)."""
    lines = []
    for row in data["criteria"]:
        o, n = (CalibrationRecord.model_validate(row[s]) if row[s] else None
                for s in ("old", "new"))
        ch = Figure.model_validate(row["changed_suggestions"])
        least = min(x.cells_adjudicated for x in (o, n) if x is not None)
        lines.append((
            f"{row['task_id']}/{row['field_id']}",
            _pair(o and o.cells_adjudicated, n and n.cells_adjudicated)
            + _enough(least, data.get("min_cells", 1)),
            _pair(o and _ratio(o.answer_accuracy), n and _ratio(n.answer_accuracy)),
            _pair(o and o.classification_kappa, n and n.classification_kappa, "{:.2f}"),
            _ratio(ch) or "-",
            _pair(o and _ratio(o.fallback), n and _ratio(n.fallback)),
            _pair(o and o.cost_per_cell_usd, n and n.cost_per_cell_usd, "{:.4f}")))
    to, tn = data["totals"]["old"], data["totals"]["new"]

    def per_cell(t: dict[str, Any]) -> float | None:
        return t["cost_usd"] / t["cells_judged"] if t["cells_judged"] else None
    lines.append((
        "all criteria", "",
        _pair(_ratio(Figure(**to["answer_accuracy"])), _ratio(Figure(**tn["answer_accuracy"]))),
        "", "", _pair(_ratio(Figure(**to["fallback"])), _ratio(Figure(**tn["fallback"]))),
        _pair(per_cell(to), per_cell(tn), "{:.4f}")))
    title = (f"prompt version {data['old']} -> {data['new']} against the human "
             "adjudications (accuracy and kappa over adjudicated, non-fallback cells; "
             "[95% Wilson interval]; 'not enough cells' below "
             f"{data.get('min_cells', 1)} adjudicated cells)")
    return table(title, lines, HEADERS)


BY_MODEL_HEADERS = ("criterion", "model", "prompt version", "judged", "adjudicated", "kappa",
                    "AC1", "accuracy", "fallbacks", "USD/1k cells")


def model_of(cal: Calibration, group: tuple[str, str, str]) -> str:
    """The model that judged a series (the most frequent among its results; a version names
    one model, fallbacks included)."""
    counts: dict[str, int] = {}
    for r in cal.results_of(group).values():
        counts[r.model] = counts.get(r.model, 0) + 1
    return max(sorted(counts), key=lambda m: counts[m]) if counts else "-"


def by_model(cal: Calibration, now: datetime, criterion: str | None = None,
             current_model: str | None = None, min_cells: int = 1,
             margin: float = 0.05) -> dict[str, Any]:
    """Every (criterion, prompt version) series side by side with its model: kappa and
    accuracy against the adjudications, cost per 1,000 judged cells — the evidence for
    moving a criterion to another model (``llm.criterion_models``)."""
    rows = []
    for group in cal.groups():
        task, field, version = group
        if criterion is not None and field != criterion:
            continue
        rec = cal.record(group, now)
        per_1k = None if rec.cost_per_cell_usd is None else round(
            rec.cost_per_cell_usd * 1000, 6)
        rows.append({"task_id": task, "field_id": field, "prompt_version": version,
                     "model": model_of(cal, group), "usd_per_1000_cells": per_1k,
                     "record": rec.model_dump(mode="json")})
    return {"series": rows, "min_cells": min_cells, "margin": margin,
            "recommendations": recommend(cal, rows, current_model, min_cells, margin)}


def render_by_model(data: dict[str, Any]) -> str:
    lines = []
    least = data.get("min_cells", 1)
    for row in data["series"]:
        rec = CalibrationRecord.model_validate(row["record"])
        cost = row["usd_per_1000_cells"]
        lines.append((f"{row['task_id']}/{row['field_id']}", row["model"],
                      row["prompt_version"], rec.cells_judged,
                      f"{rec.cells_adjudicated}{_enough(rec.cells_adjudicated, least)}",
                      _coef(rec.classification_kappa, rec.kappa_ci95), _coef(rec.ac1),
                      _ratio(rec.answer_accuracy) or "-", _ratio(rec.fallback) or "-",
                      "-" if cost is None else f"{cost:.2f}"))
    title = ("every criterion by model and prompt version against the human adjudications "
             "(kappa and AC1: classification hint vs the reviewers; accuracy and kappa over "
             "adjudicated, non-fallback cells; [95% intervals]; cost per 1,000 judged cells)")
    return table(title, lines, BY_MODEL_HEADERS) + render_choice(
        data.get("recommendations", []), least, data.get("margin", 0.05))
