"""Verdict bands: computed from scores in code, never trusted from the model."""

from __future__ import annotations

from schemas.medkit import Verdict

#: (lower bound, verdict), best first; a score below every bound is a clear fail.
BANDS: tuple[tuple[float, Verdict], ...] = (
    (0.85, "excellent"),
    (0.70, "good"),
    (0.55, "satisfactory"),
    (0.40, "borderline"),
)


def band(score: float) -> Verdict:
    """The verdict of a score in [0, 1] (bounds inclusive: 0.85 is excellent)."""
    for lower, verdict in BANDS:
        if score >= lower - 1e-9:
            return verdict
    return "clear-fail"
