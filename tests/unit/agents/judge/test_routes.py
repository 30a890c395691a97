"""Per-criterion judge models (llm.criterion_models): one-line errors for unknown criteria,
models and efforts; the judge sends an overridden criterion to its model, and the prompt
version says which model judged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents.context.charts import ChartStore
from agents.errors import AgentsError
from agents.judge.judge import Judge
from agents.judge.routes import build_routes, check_overrides
from agents.providers.anthropic import AnthropicProvider
from agents.settings import Settings
from schemas.skill import Skill
from tests.unit.agents.judge.fixtures import answer, disagreement, job
from tests.unit.agents.judge.test_judge import GOOD
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

BASE = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
        "deadline_seconds": 5.0, "max_attempts": 2, "requests_per_minute": 6000,
        "max_tokens": 500, "check_cache_prefixes": False}


def settings(overrides: dict[str, Any]) -> Settings:
    return Settings(llm={**BASE, "criterion_models": overrides})


@pytest.mark.parametrize(("overrides", "says"), [
    ({"egfr_category": {"model": "claude-haiku-4-5"}},
     "llm.criterion_models['egfr_category']: no such criterion"),
    ({"t2dm_dx": {"model": "claude-haiku-9-9"}},
     "llm.criterion_models['t2dm_dx']: model 'claude-haiku-9-9' is not in the model catalogue"),
])
def test_a_bad_override_is_one_line(skill: Skill, overrides: dict[str, Any],
                                    says: str) -> None:
    with pytest.raises(AgentsError) as err:
        check_overrides(settings(overrides), skill)
    assert says in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(("change", "says"), [
    ({"charts_dir": "/nope/charts"},
     "charts folder /nope/charts does not exist (JUDGEFLOW_CHARTS_DIR)"),
    ({"charts_dir": __file__}, "is not a folder (JUDGEFLOW_CHARTS_DIR)"),
    ({"chart_tools": {"criteria": {"egfr_category": "on"}}},
     "chart_tools.criteria['egfr_category'] (JUDGEFLOW_CHART_TOOLS__CRITERIA): no such "
     "criterion"),
])
def test_a_start_setting_the_judge_cannot_use_is_one_line(skill: Skill, change: dict[str, Any],
                                                          says: str) -> None:
    """Before: a missing charts folder judged every cell without notes (fallbacks, no
    error) and a typo in chart_tools.criteria was ignored."""
    with pytest.raises(AgentsError) as err:
        check_overrides(Settings(**change), skill)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_the_env_json_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEFLOW_LLM__CRITERION_MODELS",
                       '{"egfr_category": {"model": "claude-haiku-5-5", "effort": "low"}}')
    o = Settings().llm.criterion_models["egfr_category"]
    assert (o.model, o.effort) == ("claude-haiku-5-5", "low")


async def test_an_overridden_criterion_goes_to_its_model(
        skill: Skill, store: ChartStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    s = settings({"on_sglt2i": {"model": "claude-haiku-4-5"},
                  "latest_hba1c": {"model": "claude-sonnet-5-5"}})  # same as default: no route
    with FakeAnthropic() as fake:
        fake.responder = lambda body: Reply.message(text=json.dumps(
            {**GOOD, "suggested_answer": "yes" if "sglt2i" in json.dumps(body) else True}),
            input_tokens=1000)

        made: list[AnthropicProvider] = []

        def make(x: Settings) -> AnthropicProvider:
            made.append(AnthropicProvider(x.llm, base_url=fake.base_url))
            return made[-1]

        routes = build_routes(s, skill, make)
        assert set(routes) == {"on_sglt2i"}
        judge = Judge(s, skill, store, make(s), routes=routes)
        plain = await judge.judge(disagreement())
        moved = await judge.judge(job("disagreement", answer("default", "yes",
                                                             field_id="on_sglt2i"),
                                      answer("skeptical", "no", field_id="on_sglt2i")))
        models = [r.body["model"] for r in fake.message_requests()]
    assert models[0] == "claude-sonnet-5-5" and set(models[1:]) == {"claude-haiku-4-5"}
    assert (plain.model, moved.model) == ("claude-sonnet-5-5", "claude-haiku-4-5")
    assert plain.prompt_version == judge.prompt_version
    assert moved.prompt_version != judge.prompt_version  # the version reflects the model
    per_call = [r.usage.cost_usd / r.usage.llm_calls for r in (moved, plain)]
    assert per_call[0] < per_call[1]  # priced as the cheaper model
    assert judge.series_version.startswith(judge.prompt_version + "+routes-")
    # the same override gives the same version (a stable series); another model another
    again = Judge(s, skill, store, make(s), routes=build_routes(s, skill, make))
    assert again.version_for(moved_job := job("disagreement", answer(
        "default", "yes", field_id="on_sglt2i"))) == moved.prompt_version
    other = settings({"on_sglt2i": {"model": "claude-opus-5-5"}})
    assert Judge(other, skill, store, make(other), routes=build_routes(
        other, skill, make)).version_for(moved_job) != moved.prompt_version
    for provider in made:  # left open, the SDK closes them on a later test's event loop
        await provider.aclose()


def test_a_criterion_models_value_that_is_not_json_is_one_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    monkeypatch.setenv("JUDGEFLOW_LLM__CRITERION_MODELS", "{not json")
    assert main(["config"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("judgeflow: invalid configuration:") and err.count("\n") == 1
