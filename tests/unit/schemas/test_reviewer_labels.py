"""The judge contract's positional labels read with the agents' ids (issues 16 and 18): every
screen says ``default`` and ``error of skeptical``, never ``agent_a``/``agent_b_error``."""

from __future__ import annotations

from typing import Any

import pytest

from schemas.calibration import CLASSIFICATIONS
from schemas.reviewer_labels import (
    FORM_ORDER,
    class_key,
    classification_choices,
    classification_label,
    name_agents,
    resolve,
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
    # every agent can be blamed, the third too (issue 16 item 2): it has no positional token
    assert [(c["value"], c["error_agent"]) for c in choices] == [
        ("guideline_gap", None), ("agent_a_error", "default"), ("agent_b_error", "skeptical"),
        ("agent_error", "third"), ("true_ambiguity", None), ("n_a", None)]
    assert len({c["key"] for c in choices}) == len(choices)
    words = " | ".join(str(c["label"]) for c in choices)
    assert "error of default | error of skeptical | error of third" in words
    assert "agent_a" not in words and "agent_b" not in words
    two = classification_choices([])  # a result without agents: the two positional ones
    assert [c["value"] for c in two] == list(FORM_ORDER)
    assert "error of the second agent" in " ".join(str(c["label"]) for c in two)


@pytest.mark.parametrize(("token", "who", "agents", "stored"), [
    ("agent_error", "skeptical", ("default", "skeptical"), ("agent_b_error", "skeptical")),
    ("agent_error", "third", ("default", "skeptical", "third"), ("agent_error", "third")),
    ("agent_a_error", None, ("default", "skeptical"), ("agent_a_error", "default")),
    ("agent_a_error", None, (), ("agent_a_error", None)),
    ("guideline_gap", None, ("default",), ("guideline_gap", None)),
])
def test_a_blamed_agent_is_stored_positionally_when_it_can_be(
        token: str, who: str | None, agents: tuple[str, ...], stored: tuple[Any, ...]) -> None:
    assert resolve(token, who, agents) == stored


@pytest.mark.parametrize(("token", "who", "agents"), [
    ("agent_error", "nobody", ("default", "skeptical")),
    ("agent_error", None, ("default", "skeptical")),
    ("agent_a_error", "skeptical", ("default", "skeptical")),
    ("n_a", "default", ("default", "skeptical")),
])
def test_a_blame_that_names_no_agent_of_the_cell_is_refused(
        token: str, who: str | None, agents: tuple[str, ...]) -> None:
    with pytest.raises(ValueError):
        resolve(token, who, agents)


def test_class_keys_count_a_third_agents_error_as_its_own_class() -> None:
    agents = ("default", "skeptical", "third")
    assert class_key("agent_error", "third", agents) == "agent_error:third"
    assert class_key("agent_b_error", "skeptical", agents) == "agent_b_error"
    assert class_key("agent_b_error", None, agents) == "agent_b_error"
    assert classification_label("agent_error:third", agents) == "error of third"
