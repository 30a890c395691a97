"""Settings survive the trip through ``settings_env`` (``judgeflow config`` prints it; the demo
and benches hand it to child processes): dicts keyed by ids keep their keys' case."""

from __future__ import annotations

import pytest

from agents.settings import Settings
from streams.settings_env import settings_env


def test_criterion_models_travel_as_one_json_value_and_come_back_equal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    routes = {"CKD_stage": {"model": "claude-haiku-5-5", "effort": "low"},
              "latest_egfr": {"model": "claude-haiku-5-5"}}
    s = Settings(llm={"criterion_models": routes},
                 expected_agents_by_task={"Task-A": ["default", "skeptical", "third"]})
    env = settings_env(s)
    assert env["JUDGEFLOW_LLM__CRITERION_MODELS"].startswith('{"CKD_stage":')
    assert not [k for k in env if k.startswith("JUDGEFLOW_LLM__CRITERION_MODELS__")]
    for name in list(env):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    again = Settings()
    assert again.llm.criterion_models == s.llm.criterion_models
    assert again.expected_agents_by_task == s.expected_agents_by_task
