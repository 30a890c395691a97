"""The model catalogue: prices of a known usage per current model, lookups, operator file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.providers import catalogue
from agents.providers.catalogue import UnknownModel, cost_usd

#: 1M input, 200k output, 3M cache reads, 500k cache writes (USD per model, by hand from
#: the price pages: in + out + read + write; batch: half of all of it).
USAGE = {"input_tokens": 1_000_000, "output_tokens": 200_000, "cache_read": 3_000_000,
         "cache_write": 500_000}


@pytest.mark.parametrize(("model", "ttl", "batch", "expected"), [
    ("claude-sonnet-5-5", "5m", False, 2.0 + 2.0 + 0.30 + 1.25),
    ("claude-sonnet-5-5", "1h", False, 2.0 + 2.0 + 0.30 + 2.00),
    ("claude-sonnet-5-5", "5m", True, (2.0 + 2.0 + 0.30 + 1.25) / 2),
    ("claude-opus-5-5", "5m", False, 4.0 + 4.0 + 0.60 + 2.50),
    ("claude-opus-5-5", "1h", False, 4.0 + 4.0 + 0.60 + 4.00),
    ("claude-opus-5-5", "5m", True, (4.0 + 4.0 + 0.60 + 2.50) / 2),
    ("claude-haiku-4-5", "5m", False, 1.0 + 1.0 + 0.30 + 0.625),
    ("claude-haiku-4-5", "1h", True, (1.0 + 1.0 + 0.30 + 1.00) / 2),
    ("claude-fable-5-1", "5m", False, 10.0 + 10.0 + 0.75 + 6.25),
    # 5.2: $8/$40, reads $0.20, writes $10/$16 (its own price, not Fable 5's $10/$50)
    ("claude-fable-5-2", "5m", False, 8.0 + 8.0 + 0.60 + 5.0),
    ("claude-mythos-5-2", "1h", False, 8.0 + 8.0 + 0.60 + 8.0),
    ("claude-sonnet-4-6", "5m", False, 3.0 + 3.0 + 0.90 + 1.875),
    ("claude-opus-4-8", "5m", False, 5.0 + 5.0 + 1.50 + 3.125),
    # Haiku 5.5: this usage is a 4.5M-token prompt, over 100K: every rate is the long one
    ("claude-haiku-5-5", "5m", False, 0.5 + 0.5 + 0.15 + 0.3125),
    ("claude-haiku-5-5", "1h", True, (0.5 + 0.5 + 0.15 + 0.5) / 2),
])
def test_cost_of_a_known_usage(model: str, ttl: catalogue.TTL, batch: bool,
                               expected: float) -> None:
    entry = catalogue.load().get(model)
    assert cost_usd(entry, **USAGE, ttl=ttl, batch=batch) == pytest.approx(expected)


@pytest.mark.parametrize(("prompt", "cache_read", "output", "expected"), [
    # (input, cache reads, output) -> USD by hand: <= 100K prompt at $0.10/$0.01/$0.50
    (60_000, 40_000, 2_000, 60_000 * 0.10e-6 + 40_000 * 0.01e-6 + 2_000 * 0.50e-6),
    # one token more: the whole request, output included, at $0.50/$0.05/$2.50
    (60_001, 40_000, 2_000, 60_001 * 0.50e-6 + 40_000 * 0.05e-6 + 2_000 * 2.50e-6),
])
def test_haiku_5_5_is_priced_by_the_prompt_length_of_each_request(
        prompt: int, cache_read: int, output: int, expected: float) -> None:
    entry = catalogue.load().get("claude-haiku-5-5")
    got = cost_usd(entry, input_tokens=prompt, cache_read=cache_read, output_tokens=output)
    assert got == pytest.approx(expected, abs=1e-8)


def test_every_entry_has_a_source_and_a_check_date() -> None:
    for entry in catalogue.load().entries.values():
        assert entry.source.startswith("https://platform.claude.com/"), entry.id
        assert entry.checked is not None, entry.id


@pytest.mark.parametrize(("model", "minimum", "forced", "replacement"), [
    ("claude-sonnet-5-5", 2048, False, None),
    ("claude-opus-5-5", 1024, False, None),
    ("claude-haiku-4-5", 4096, True, None),
    ("claude-opus-4-5", 4096, True, "claude-opus-5-5"),
])
def test_what_the_models_api_does_not_serve(model: str, minimum: int, forced: bool,
                                            replacement: str | None) -> None:
    e = catalogue.load().get(model)
    assert (e.min_cache_tokens, e.forced_tool_choice, e.replacement) == (
        minimum, forced, replacement)


def test_dated_snapshots_resolve_and_unknown_models_are_an_error() -> None:
    cat = catalogue.load()
    assert cat.get("claude-sonnet-5-5-20261001").id == "claude-sonnet-5-5"
    assert cat.find("claude-sonnet-5-5-preview") is None
    # a minor version is a model of its own, never a "dated" Fable 5
    assert cat.get("claude-fable-5-2").id == "claude-fable-5-2"
    without = catalogue.Catalogue({k: v for k, v in cat.entries.items()
                                   if k != "claude-fable-5-2"})
    assert without.find("claude-fable-5-2") is None
    assert without.get("claude-fable-5-20261109").id == "claude-fable-5"
    with pytest.raises(UnknownModel, match="'claude-nope' is not in the model catalogue"):
        cat.get("claude-nope")


def test_cache_minimums_not_read_on_the_official_page_are_marked_unconfirmed() -> None:
    data = json.loads(catalogue.PACKAGED.read_text())["models"]
    assert all("min_cache_confirmed" in m for m in data)  # said, not defaulted
    for m in data:
        if not m["min_cache_confirmed"]:
            assert "min_cache_tokens unconfirmed" in m.get("note", ""), m["id"]


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
