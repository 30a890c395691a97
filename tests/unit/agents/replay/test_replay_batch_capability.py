"""`replay --batch` asks the Models API whether the model can batch, before touching Kafka."""

from __future__ import annotations

import pytest

from agents.errors import AgentsError
from agents.providers.anthropic import AnthropicProvider
from agents.replay.run import Options, replay
from agents.settings import Settings
from tools.fakes.fake_anthropic import FakeAnthropic


async def test_batch_replay_is_refused_for_a_model_without_batch_support(
        fake: FakeAnthropic) -> None:
    fake.models["claude-sonnet-5-5"].info["capabilities"]["batch"]["supported"] = False
    settings = Settings(llm={"provider": "anthropic", "model": "claude-sonnet-5-5"},
                        kafka={"bootstrap_servers": "127.0.0.1:1"})
    provider = AnthropicProvider(settings.llm, base_url=fake.base_url)
    with pytest.raises(AgentsError, match="does not support the Message Batches API"):
        await replay(settings, Options(worker="judge", batch=True), provider=provider)
    await provider.aclose()
    assert fake.message_requests() == [] and not fake.batches.batches
