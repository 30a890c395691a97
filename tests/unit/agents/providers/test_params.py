"""build_params reads what each model accepts from the catalogue (pure, table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.providers import catalogue
from agents.providers.anthropic_params import build_params
from agents.providers.base import LLMRequest, SystemBlock

TOOL = {"name": "t", "input_schema": {"type": "object", "properties": {},
                                      "additionalProperties": False}}


def params(model: str, **kw: Any) -> dict[str, Any]:
    request = LLMRequest(system=(SystemBlock("s", cache=True),),
                         messages=({"role": "user", "content": "x"},), max_tokens=1000,
                         tools=(TOOL,), tool_choice=kw.pop("tool_choice", "auto"),
                         sampling=kw.pop("sampling", {}))
    return build_params(request, model, catalogue.load().find(model), **kw)


@pytest.mark.parametrize(("model", "choice", "sent"), [
    ("claude-sonnet-5-5", "any", "auto"), ("claude-opus-5-5", "tool", "auto"),
    ("claude-haiku-4-5", "any", "any"), ("claude-sonnet-5-5", "none", "none"),
    ("claude-unknown-1", "any", "auto"),
])
def test_forced_tool_choice_only_where_the_model_accepts_it(model: str, choice: str,
                                                           sent: str) -> None:
    assert params(model, tool_choice=choice)["tool_choice"] == {"type": sent}


@pytest.mark.parametrize(("model", "kept"), [("claude-sonnet-5-5", False),
                                             ("claude-opus-5-5", False),
                                             ("claude-haiku-4-5", True)])
def test_sampling_params_only_where_the_model_accepts_them(model: str, kept: bool) -> None:
    p = params(model, sampling={"temperature": 0.0, "top_k": 5.0, "seed": 1.0})
    assert ("temperature" in p and "top_k" in p) is kept and "seed" not in p


@pytest.mark.parametrize(("model", "floor", "effort", "max_tokens", "sent_effort"), [
    ("claude-sonnet-5-5", 16_000, None, 16_000, None),
    ("claude-sonnet-5-5", 16_000, "medium", 16_000, "medium"),
    ("claude-haiku-4-5", 16_000, "medium", 1000, None),  # no thinking, no effort option
    ("claude-opus-5-5", 500, "max", 1000, "max"),
])
def test_adaptive_models_get_the_thinking_budget_and_effort(
        model: str, floor: int, effort: str | None, max_tokens: int,
        sent_effort: str | None) -> None:
    p = params(model, max_tokens_floor=floor, effort=effort)
    assert p["max_tokens"] == max_tokens
    assert p.get("output_config", {}).get("effort") == sent_effort
    assert "thinking" not in p  # adaptive by default: nothing to switch on


def test_cache_ttl_is_sent_on_every_breakpoint() -> None:
    assert params("claude-sonnet-5-5")["system"][0]["cache_control"] == {"type": "ephemeral"}
    one_hour = params("claude-sonnet-5-5", cache_ttl="1h")["system"][0]["cache_control"]
    assert one_hour == {"type": "ephemeral", "ttl": "1h"}
