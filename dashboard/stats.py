"""Per prompt version: cost and cache share from the judge results in the window, and the
calibration records (accuracy, kappa per criterion and version) when the calibrate worker
publishes them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from schemas.reviewer_labels import classification_label


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def cost_by_version(results: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Results, USD, status mix and the share of input tokens served from the prompt cache."""
    table: dict[str, dict[str, Any]] = {}
    for result in results:
        version = str(result.get("prompt_version") or "?")
        row = table.setdefault(version, {"prompt_version": version, "results": 0,
                                         "cost_usd": 0.0, "input_tokens": 0.0,
                                         "cache_read_tokens": 0.0, "statuses": {}})
        raw = result.get("usage")
        usage: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
        row["results"] += 1
        row["cost_usd"] += _num(usage.get("cost_usd"))
        row["cache_read_tokens"] += _num(usage.get("cache_read_input_tokens"))
        row["input_tokens"] += (_num(usage.get("input_tokens"))
                                + _num(usage.get("cache_read_input_tokens"))
                                + _num(usage.get("cache_creation_input_tokens")))
        status = str(result.get("status", ""))
        row["statuses"][status] = row["statuses"].get(status, 0) + 1
    out = []
    for version in sorted(table):
        row = table[version]
        tokens, cached = row.pop("input_tokens"), row.pop("cache_read_tokens")
        row["cache_share"] = cached / tokens if tokens else None
        row["cost_usd"] = round(row["cost_usd"], 6)
        out.append(row)
    return out


def _rate(value: Any) -> Any:
    return value.get("rate") if isinstance(value, dict) else value


def _counts(value: Any) -> str | None:
    if isinstance(value, dict) and isinstance(value.get("n"), int):
        return f"{value.get('hits')}/{value['n']}"
    return None


def _confusion(value: Any, agents: Any) -> dict[str, Any] | None:
    """The matrix with its labels named by the record's agents (``error of default``, not
    ``agent_a_error``); ``tokens`` keeps the wire labels."""
    if not isinstance(value, dict):
        return None
    labels, counts = value.get("labels"), value.get("counts")
    if not isinstance(labels, list) or not isinstance(counts, list) or len(counts) != len(
            labels) or not all(isinstance(c, list) and len(c) == len(labels) for c in counts):
        return None
    ids = [str(a) for a in agents] if isinstance(agents, list) else []
    return {"labels": [classification_label(str(t), ids) for t in labels], "tokens": labels,
            "counts": counts}


def _ratio(value: Any) -> dict[str, Any] | None:
    """A ``{hits, n, rate, ci95}`` figure as the page shows it (None when absent)."""
    if not isinstance(value, dict):
        return None
    return {"rate": value.get("rate"), "counts": _counts(value), "ci95": value.get("ci95")}


def _mode(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    return {"accuracy": _ratio(value.get("answer_accuracy")),
            "kappa": value.get("classification_kappa"), "kappa_ci95": value.get("kappa_ci95"),
            "ac1": value.get("ac1")}


def _modes(value: Any) -> dict[str, Any] | None:
    """Blind and verify figures and verify minus blind (issue 27), when the record has them."""
    if not isinstance(value, dict):
        return None
    diff = value.get("verify_minus_blind")
    return {"blind": _mode(value.get("blind")), "verify": _mode(value.get("verify")),
            "difference": diff if isinstance(diff, dict) else None}


def _human(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    return {"n": value.get("n"), "percent": _ratio(value.get("percent")),
            "kappa": value.get("kappa"), "kappa_ci95": value.get("kappa_ci95"),
            "ac1": value.get("ac1"), "ac1_ci95": value.get("ac1_ci95")}


def calibration_rows(records: Iterable[Mapping[str, Any]], min_cells: int = 1
                     ) -> list[dict[str, Any]]:
    """The columns the page shows from ``CalibrationRecord``s (whatever else they carry);
    sorted by criterion and version. ``enough``: at least ``min_cells`` adjudicated cells
    (below it the page says "not enough cells" beside the figures)."""
    rows = [{"task_id": r.get("task_id"), "field_id": r.get("field_id"),
             "prompt_version": r.get("prompt_version"),
             "judged": r.get("cells_judged"),
             "n": r.get("cells_adjudicated", r.get("n")),
             "accuracy": _rate(r.get("answer_accuracy", r.get("accuracy"))),
             "accuracy_counts": _counts(r.get("answer_accuracy")),
             "confusion": _confusion(r.get("confusion"), r.get("agents")),
             "kappa": r.get("classification_kappa", r.get("kappa")),
             "fallback": _rate(r.get("fallback")),
             "cost_usd": r.get("cost_usd"),
             "accuracy_ci95": (r.get("answer_accuracy") or {}).get("ci95")
             if isinstance(r.get("answer_accuracy"), dict) else None,
             "kappa_ci95": r.get("kappa_ci95"), "ac1": r.get("ac1"),
             "modes": _modes(r.get("by_review_mode")),
             "human": _human(r.get("human_agreement")),
             "enough": isinstance(r.get("cells_adjudicated"), int)
             and r["cells_adjudicated"] >= min_cells} for r in records]
    return sorted(rows, key=lambda r: (str(r["task_id"]), str(r["field_id"]),
                                       str(r["prompt_version"])))
