"""build_params reads what each model accepts from the Models API's facts and the catalogue
(pure, table-driven); every request is valid for API version 2026-10-21."""

from __future__ import annotations

from typing import Any

import pytest

from agents.providers import catalogue
from agents.providers.anthropic_params import build_params
from agents.providers.base import LLMRequest, SystemBlock
from agents.providers.model_facts import ModelFacts
from tools.fakes.fake_models import load as served

FACTS = {m: ModelFacts(id=m, efforts=("low", "medium", "high", "xhigh", "max"),
                       structured_outputs=True, max_tokens=128_000)
         for m in ("claude-sonnet-5-5", "claude-opus-5-5")}
FACTS["claude-haiku-4-5"] = ModelFacts(id="claude-haiku-4-5", adaptive_thinking=False,
                                       structured_outputs=True, max_tokens=64_000)

TOOL = {"name": "t", "input_schema": {"type": "object", "properties": {},
                                      "additionalProperties": False}}


def params(model: str, **kw: Any) -> dict[str, Any]:
    request = LLMRequest(
        system=(SystemBlock("s", cache=True),),
        messages=kw.pop("messages", ({"role": "user", "content": "x"},)),
        max_tokens=kw.pop("max_tokens", 1000), tools=(TOOL,),
        tool_choice=kw.pop("tool_choice", "auto"), output_schema=kw.pop("output_schema", None))
    facts = kw.pop("facts", FACTS.get(model))
    return build_params(request, model, catalogue.load().find(model), facts=facts, **kw)


@pytest.mark.parametrize(("model", "choice", "sent"), [
    ("claude-sonnet-5-5", "any", "auto"), ("claude-opus-5-5", "tool", "auto"),
    ("claude-haiku-4-5", "any", "any"), ("claude-sonnet-5-5", "none", "none"),
    ("claude-unknown-1", "any", "auto"),
])
def test_forced_tool_choice_only_where_the_model_accepts_it(model: str, choice: str,
                                                           sent: str) -> None:
    assert params(model, tool_choice=choice)["tool_choice"] == {"type": sent}


def test_no_sampling_parameter_is_ever_sent() -> None:
    for model in ("claude-sonnet-5-5", "claude-haiku-4-5", "claude-unknown-1"):
        assert not {"temperature", "top_p", "top_k"} & set(params(model))


def test_user_citations_are_dropped_and_assistant_documents_refused() -> None:
    cited = {"role": "user", "content": [{"type": "text", "text": "q", "citations": [
        {"type": "char_location", "cited_text": "q"}]}]}
    sent = params("claude-sonnet-5-5", messages=(cited,))["messages"]
    assert sent == [{"role": "user", "content": [{"type": "text", "text": "q"}]}]
    doc = {"role": "assistant", "content": [{"type": "document", "source": {}}]}
    with pytest.raises(ValueError, match="2026-10-21"):
        params("claude-sonnet-5-5", messages=({"role": "user", "content": "x"}, doc))


def test_structured_outputs_only_where_the_models_api_says_so() -> None:
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    assert params("claude-sonnet-5-5", output_schema=schema)["output_config"]["format"]
    without = ModelFacts(id="m", structured_outputs=False)
    assert "output_config" not in params("claude-sonnet-5-5", output_schema=schema,
                                         facts=without)
    # not asked yet (the Models API did not answer): not sent, as the start-up warning says:
    # on a model without structured outputs the format is a permanent 400, while the
    # answer without it is accepted by every model (and validated in code either way)
    assert "output_config" not in params("claude-sonnet-5-5", output_schema=schema,
                                         facts=None)


def test_max_tokens_is_capped_at_the_model_maximum() -> None:
    assert params("claude-haiku-4-5", max_tokens=100_000)["max_tokens"] == 64_000


@pytest.mark.parametrize(("model", "floor", "effort", "max_tokens", "sent_effort"), [
    ("claude-sonnet-5-5", 16_000, None, 16_000, None),
    ("claude-sonnet-5-5", 16_000, "medium", 16_000, "medium"),
    ("claude-haiku-4-5", 16_000, "medium", 1000, None),  # no thinking, no effort option
    ("claude-unknown-1", 16_000, "low", 16_000, "low"),  # no facts yet: as configured
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


@pytest.mark.parametrize(("ttl", "marker"), [
    ("5m", {"type": "ephemeral"}), ("1h", {"type": "ephemeral", "ttl": "1h"})])
def test_a_breakpoint_in_the_messages_gets_the_configured_lifetime(
        ttl: str, marker: dict[str, str]) -> None:
    # the chart-tool loop marks its newest turn; the cost is priced at llm.cache_ttl
    turn = {"role": "user", "content": [{"type": "text", "text": "x",
                                         "cache_control": {"type": "ephemeral"}}]}
    sent = params("claude-sonnet-5-5", messages=(turn,), cache_ttl=ttl)
    assert sent["messages"][0]["content"][0]["cache_control"] == marker
    assert sent["system"][0]["cache_control"] == marker


def test_served_facts_agree_with_our_parse() -> None:
    """The fake's ModelInfo bodies parse into the facts build_params relies on."""
    from agents.providers.model_facts import parse

    info = served()
    sonnet = parse(info["claude-sonnet-5-5"].info)
    assert sonnet.efforts == ("low", "medium", "high", "xhigh") and sonnet.adaptive_thinking
    assert sonnet.structured_outputs and sonnet.batch and sonnet.max_tokens == 128_000
    haiku = parse(info["claude-haiku-4-5"].info)
    assert haiku.efforts == () and not haiku.adaptive_thinking
    old = parse(info["claude-opus-4-5"].info)
    assert old.lifecycle == "deprecated" and str(old.retires_at) == "2027-01-22"
