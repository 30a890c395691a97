"""The Models API's ModelInfo -> facts, and the catalogue cross-check (pure, table-driven)."""

from __future__ import annotations

from datetime import date

import pytest

from agents.providers import catalogue
from agents.providers.model_facts import ModelFacts, cross_check, parse


def test_a_model_info_without_capabilities_gets_the_conservative_defaults() -> None:
    facts = parse({"id": "claude-x", "lifecycle": "deprecated",
                   "retires_at": "2027-01-22T00:00:00Z"})
    assert facts == ModelFacts(id="claude-x", lifecycle="deprecated",
                               retires_at=date(2027, 1, 22))
    assert not facts.structured_outputs and facts.efforts == () and facts.batch


@pytest.mark.parametrize(("model", "facts", "needle"), [
    ("claude-sonnet-5-5", ModelFacts(id="claude-sonnet-5-5", batch=False),
     "does not support the Batch API"),
    ("claude-haiku-5-5", ModelFacts(id="claude-haiku-5-5", max_input_tokens=100_000),
     "past its 100,000-token context"),
    ("claude-sonnet-5-5", ModelFacts(id="claude-sonnet-5-5", lifecycle="deprecated"),
     "names no replacement"),
    ("claude-opus-4-5", ModelFacts(id="claude-opus-4-5", lifecycle="active"),
     "says it is active"),
])
def test_each_disagreement_is_one_line(model: str, facts: ModelFacts, needle: str) -> None:
    [line] = cross_check(catalogue.load().get(model), facts)
    assert needle in line and "\n" not in line


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-haiku-5-5"])
def test_no_warning_when_they_agree(model: str) -> None:
    facts = ModelFacts(id=model, max_input_tokens=1_000_000)
    assert cross_check(catalogue.load().get(model), facts) == []
