"""Both LLM workers refuse to start (exit 2, one line) on an unknown or retired model, before
touching Kafka; a current model gets past the check; every refusal closes the SDK client."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from agents.debrief import run as debrief_run
from agents.debrief.run import run_worker as run_debrief
from agents.judge import run as judge_run
from agents.judge.run import run_worker as run_judge
from agents.providers.anthropic import AnthropicProvider
from agents.providers.factory import make_provider
from agents.settings import Settings
from streams.exit_codes import CommandError
from streams.kafka_access import KafkaUnreachable
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


@pytest.mark.parametrize("module", [judge_run, debrief_run], ids=["judge", "debrief"])
@pytest.mark.parametrize("refusal", ["no key", "retired model", "no broker"])
def test_a_refused_start_closes_the_sdk_client(
        fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch, module: ModuleType,
        refusal: str) -> None:
    # An SDK client dropped open is closed by the SDK's finaliser on whatever event loop runs
    # when it is collected (another test's, a replay's), and fails there: each exit closes it.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    if refusal == "no key":
        monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    made: list[AnthropicProvider] = []

    def make(settings: Settings) -> AnthropicProvider:
        made.append(make_provider(settings))  # type: ignore[arg-type]
        return made[-1]

    monkeypatch.setattr(module, "make_provider", make)
    model = "claude-sonnet-4-5" if refusal == "retired model" else "claude-sonnet-5-5"
    settings = Settings(llm={"provider": "anthropic", "model": model},
                        kafka={"bootstrap_servers": "127.0.0.1:1"})
    with pytest.raises((CommandError, KafkaUnreachable)):  # both one line on the command line
        module.run_worker(settings)
    assert [p.client.is_closed() for p in made] == [True]


@pytest.mark.parametrize("run", [run_judge, run_debrief], ids=["judge", "debrief"])
def test_a_missing_models_file_stops_an_offline_worker_too(run: object, tmp_path: Path) -> None:
    # a bad file must not wait for the switch to a paid provider to be found
    settings = Settings(llm={"provider": "offline", "models_file": tmp_path / "nope.json"},
                        kafka={"bootstrap_servers": "127.0.0.1:1"})
    with pytest.raises(CommandError) as err:
        run(settings)  # type: ignore[operator]
    assert err.value.code == 2 and "cannot read the models file" in str(err.value)
