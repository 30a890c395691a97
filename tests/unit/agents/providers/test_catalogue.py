"""The model catalogue: prices of a known usage per current model, lookups, operator file."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from agents.providers import catalogue
from agents.providers.catalogue import UnknownModel, cost_usd

#: 1M input, 200k output, 3M cache reads, 500k cache writes (USD per model, by hand from
#: the price pages: in + out + read + write).
USAGE = {"input_tokens": 1_000_000, "output_tokens": 200_000, "cache_read": 3_000_000,
         "cache_write": 500_000}


@pytest.mark.parametrize(("model", "ttl", "batch", "expected"), [
    ("claude-sonnet-5-5", "5m", False, 2.0 + 2.0 + 0.60 + 1.25),
    ("claude-sonnet-5-5", "1h", False, 2.0 + 2.0 + 0.60 + 2.00),
    ("claude-sonnet-5-5", "5m", True, 1.0 + 1.0 + 0.60 + 1.25),
    ("claude-opus-5-5", "5m", False, 4.0 + 4.0 + 0.60 + 2.50),
    ("claude-opus-5-5", "1h", False, 4.0 + 4.0 + 0.60 + 4.00),
    ("claude-opus-5-5", "5m", True, 2.0 + 2.0 + 0.60 + 2.50),
    ("claude-haiku-4-5", "5m", False, 1.0 + 1.0 + 0.30 + 0.625),
    ("claude-haiku-4-5", "1h", True, 0.5 + 0.5 + 0.30 + 1.00),
])
def test_cost_of_a_known_usage(model: str, ttl: catalogue.TTL, batch: bool,
                               expected: float) -> None:
    entry = catalogue.load().get(model)
    assert cost_usd(entry, **USAGE, ttl=ttl, batch=batch) == pytest.approx(expected)


@pytest.mark.parametrize(("model", "minimum", "adaptive", "forced", "sampling"), [
    ("claude-sonnet-5-5", 2048, True, False, False),
    ("claude-opus-5-5", 1024, True, False, False),
    ("claude-haiku-4-5", 4096, False, True, True),
])
def test_model_facts(model: str, minimum: int, adaptive: bool, forced: bool,
                     sampling: bool) -> None:
    e = catalogue.load().get(model)
    assert (e.min_cache_tokens, e.adaptive_thinking, e.forced_tool_choice,
            e.sampling_params) == (minimum, adaptive, forced, sampling)


@pytest.mark.parametrize(("model", "day", "status"), [
    ("claude-sonnet-4-5", date(2026, 11, 29), "active"),
    ("claude-sonnet-4-5", date(2026, 11, 30), "retired"),
    ("claude-opus-4-5", date(2026, 12, 1), "deprecated"),
    ("claude-opus-4-5", date(2027, 1, 22), "retired"),
    ("claude-sonnet-5-5", date(2026, 12, 1), "active"),
])
def test_lifecycle_from_dates(model: str, day: date, status: str) -> None:
    assert catalogue.load().get(model).status(day) == status


def test_dated_snapshots_resolve_and_unknown_models_are_an_error() -> None:
    cat = catalogue.load()
    assert cat.get("claude-sonnet-5-5-20261001").id == "claude-sonnet-5-5"
    assert cat.find("claude-sonnet-5-5-preview") is None
    with pytest.raises(UnknownModel, match="'claude-nope' is not in the model catalogue"):
        cat.get("claude-nope")


def test_an_operator_file_adds_and_overrides_models(tmp_path: Path) -> None:
    base = catalogue.load().get("claude-sonnet-5-5").model_dump(mode="json")
    extra = tmp_path / "models.json"
    extra.write_text(json.dumps({"models": [
        {**base, "id": "claude-next-1", "input": 7.0},
        {**base, "output": 11.0}]}))
    cat = catalogue.load(extra)
    assert cat.get("claude-next-1").input == 7.0
    assert cat.get("claude-sonnet-5-5").output == 11.0
    assert catalogue.load().get("claude-sonnet-5-5").output == 10.0  # packaged untouched


@pytest.mark.parametrize("content", ['{"models": [{"id": "x"}]}', "not json", '{"m": []}'])
def test_a_broken_operator_file_is_one_clear_error(tmp_path: Path, content: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(UnknownModel, match="is not a valid catalogue"):
        catalogue.load(bad)
    with pytest.raises(UnknownModel, match="cannot read"):
        catalogue.load(tmp_path / "missing.json")
