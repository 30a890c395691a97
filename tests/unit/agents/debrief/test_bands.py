import pytest

from agents.debrief.bands import band


@pytest.mark.parametrize(("score", "verdict"), [
    (1.0, "excellent"), (0.85, "excellent"), (0.849, "good"), (0.70, "good"),
    (0.6999, "satisfactory"), (0.55, "satisfactory"), (0.549, "borderline"),
    (0.40, "borderline"), (0.3999, "clear-fail"), (0.0, "clear-fail"),
])
def test_band_boundaries_are_inclusive_lower_bounds(score: float, verdict: str) -> None:
    assert band(score) == verdict
