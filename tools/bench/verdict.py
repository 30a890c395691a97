"""One word per benchmark goal. Benchmarks are measurements, not tests: a missed goal is
printed plainly (``NOT met``) and the command still exits 0."""

from __future__ import annotations


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def goal(text: str, ok: bool) -> str:
    """``(goal >= 90%: met)`` — the goal as written and whether this run met it."""
    return f"(goal {text}: {verdict(ok)})"
