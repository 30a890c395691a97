"""The judge contract's positional labels read with the agents' ids (issues 16 and 18): every
screen says ``default`` and ``error of skeptical``, never ``agent_a``/``agent_b_error``."""

from __future__ import annotations

import pytest

from schemas.calibration import CLASSIFICATIONS
from schemas.reviewer_labels import (
    FORM_ORDER,
    classification_choices,
    classification_label,
    name_agents,
)


@pytest.mark.parametrize(("label", "expected"), [
    ("agent_a", "default"), ("agent_b_error", "skeptical_error"), ("both", "default+skeptical"),
    ("neither", "neither"), ("guideline_gap", "guideline_gap"), (None, None)])
def test_labels_name_their_agents(label: str | None, expected: str | None) -> None:
    assert name_agents(label, ("default", "skeptical", "third")) == expected
    assert name_agents(label, ()) == label  # an older result without agents keeps its label


@pytest.mark.parametrize(("token", "agents", "expected"), [
    ("agent_a_error", ("default", "skeptical"), "error of default"),
    ("agent_b_error", ("default", "skeptical", "third"), "error of skeptical"),
    ("agent_b_error", ("default",), "error of the second agent"),
    ("agent_a_error", (), "error of the first agent"),
    ("guideline_gap", ("default", "skeptical"), "guideline gap"),
    ("true_ambiguity", (), "true ambiguity"),
    ("n_a", (), "n/a (not a disagreement)"),
    ("agent_c_error", ("a", "b", "c"), "agent_c_error"),  # outside the contract: as it is
])
def test_classifications_read_with_the_agents_ids(token: str, agents: tuple[str, ...],
                                                  expected: str) -> None:
    assert classification_label(token, agents) == expected


def test_the_form_offers_every_classification_named_by_agent_id() -> None:
    assert sorted(FORM_ORDER) == sorted(CLASSIFICATIONS)
    choices = classification_choices(["default", "skeptical", "third"])
    assert [c["value"] for c in choices] == list(FORM_ORDER)
    words = " ".join(c["label"] for c in choices)
    assert "error of default" in words and "error of skeptical" in words
    assert "agent_a" not in words and "agent_b" not in words and "third" not in words
