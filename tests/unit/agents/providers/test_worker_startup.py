"""Both LLM workers refuse to start (exit 2, one line) on an unknown or retired model, before
touching Kafka; a current model gets past the check."""

from __future__ import annotations

import pytest

from agents.debrief.run import run_worker as run_debrief
from agents.judge.run import run_worker as run_judge
from agents.settings import Settings
from streams.exit_codes import CommandError
from tools.fakes.fake_anthropic import FakeAnthropic


@pytest.mark.parametrize("run", [run_judge, run_debrief], ids=["judge", "debrief"])
@pytest.mark.parametrize(("model", "says"), [("claude-sonnet-4-5", "retired on 2026-11-30"),
                                             ("claude-nope-1", "not in the model catalogue")])
def test_a_worker_exits_2_on_a_model_it_cannot_use(
        fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        run: object, model: str, says: str) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    settings = Settings(llm={"provider": "anthropic", "model": model},
                        kafka={"bootstrap_servers": "127.0.0.1:1"})
    with pytest.raises(CommandError) as err:  # the command line prints it in one line
        run(settings)  # type: ignore[operator]
    assert err.value.code == 2 and says in str(err.value) and "\n" not in str(err.value)
    # not also logged (another test's SDK client closed by the GC may log here: not ours)
    assert not [r for r in caplog.records if says in r.getMessage()]
    assert fake.message_requests() == []
