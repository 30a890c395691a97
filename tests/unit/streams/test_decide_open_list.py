"""Open lists (an answer schema with no enum, as foreign skills write them): compared as a
normalised set of strings."""

from __future__ import annotations

from typing import Any

import pytest

from schemas.skill import AnswerSchema
from streams.detect.decide import decide
from streams.detect.normalize import Invalid, canonicalize
from tests.unit.streams.test_decide import AGENTS, ans

OPEN = AnswerSchema(type="list")


@pytest.mark.parametrize(("a", "b", "outcome"), [
    (["metformin", "insulin"], ["insulin", "metformin"], "agreement"),
    (["metformin"], ["metformin", "metformin"], "type_drift"),
    (["Metformin"], ["metformin"], "type_drift"),
    (["insulin  glargine"], ["Insulin glargine"], "type_drift"),
    ("metformin; insulin", ["insulin", "metformin"], "type_drift"),
    (["metformin"], ["insulin"], "disagreement"),
    (["metformin"], ["metformin", "insulin"], "disagreement"),
    ([], ["metformin"], "disagreement"),
    (None, [], "disagreement"),
    ([1.0], ["1"], "type_drift"),
])
def test_open_list_cells(a: Any, b: Any, outcome: str) -> None:
    d = decide([ans("default", a), ans("skeptical", b)], OPEN, AGENTS, 0.5)
    assert d.outcome == outcome, d.reasons


@pytest.mark.parametrize("raw", [[{"drug": "x"}], [["x"]], 3, {"x": 1}])
def test_open_list_rejects_what_is_not_a_list_of_strings(raw: Any) -> None:
    assert isinstance(canonicalize(raw, OPEN), Invalid)
