"""``judgeflow llm check --provider bedrock|vertex`` against the platform fakes: the real SDK
clients, the credential chains, what the platform lacks said once."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.main import main
from tests.unit.agents.providers import cloud_env


def test_bedrock(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                 capsys: pytest.CaptureFixture[str]) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path) as fake:
        code = main(["llm", "check", "--provider", "bedrock", "--model", "claude-haiku-4-5"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert ("bedrock model claude-haiku-4-5 as anthropic.claude-haiku-4-5-20251001-v1:0 "
            "(active on bedrock)") in out
    assert "no Message Batches API" in out and "no token counting" in out
    assert "judge: call 1: model claude-haiku-4-5" in out
    assert "debrief: call 1: model claude-haiku-4-5" in out
    assert len(fake.message_requests()) == 0 and len(fake.requests) == 2  # /model/.../invoke


def test_vertex_from_the_configured_provider(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with cloud_env.vertex(monkeypatch, tmp_path) as fake:
        monkeypatch.setenv("JUDGEFLOW_LLM__PROVIDER", "vertex")
        monkeypatch.setenv("JUDGEFLOW_LLM__MODEL", "claude-haiku-4-5")
        code = main(["llm", "check", "--worker", "judge"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "vertex model claude-haiku-4-5 as claude-haiku-4-5@20251001" in out
    assert "no token counting" not in out  # Vertex counts tokens itself
    assert "no Message Batches API" in out
    assert "judge: call 1: model claude-haiku-4-5" in out
    assert sum(r.path.endswith(":rawPredict") for r in fake.requests) == 1


def test_without_credentials_it_says_which_chain(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path) as fake:
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
        code = main(["llm", "check", "--provider", "bedrock", "--model", "claude-haiku-4-5"])
    # bedrock is the configured provider: every worker would refuse to start, so exit 2
    assert code == 2 and fake.requests == []
    err = capsys.readouterr().err
    assert err.startswith("judgeflow: llm check: no bedrock credentials found"), err


def test_a_model_bedrock_lacks_exits_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    with cloud_env.bedrock(monkeypatch, tmp_path):
        code = main(["llm", "check", "--provider", "bedrock", "--model", "claude-opus-5"])
    assert code == 2 and "has no bedrock model id" in capsys.readouterr().err


def test_bedrock_mantle_for_a_5x_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The default model (Sonnet 5.5) is served by the bedrock-mantle Messages API: the SDK's
    AnthropicBedrockMantle client, SigV4 for bedrock-mantle, counted cache prefixes."""
    with cloud_env.bedrock(monkeypatch, tmp_path) as fake:
        monkeypatch.setenv("JUDGEFLOW_LLM__PROVIDER", "bedrock")
        code = main(["llm", "check", "--calls", "2"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert ("bedrock model claude-sonnet-5-5 as anthropic.claude-sonnet-5-5 "
            "(active on bedrock)") in out
    assert "endpoint: Claude in Amazon Bedrock" in out
    assert "no Message Batches API" in out and "no token counting" not in out
    assert "judge: call 2: model claude-sonnet-5-5" in out and "cache hit yes" in out
    assert "debrief: call 1: model claude-sonnet-5-5" in out
    paths = {q.path for q in fake.requests}
    assert paths == {"/anthropic/v1/messages", "/anthropic/v1/messages/count_tokens"}
    assert all(q.status == 200 for q in fake.requests)
