"""``judgeflow llm check --provider bedrock|vertex`` against the platform fakes: the real SDK
clients, the credential chains, what the platform lacks said once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.providers import platforms
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


@pytest.mark.parametrize("model", ["claude-sonnet-4-6", "claude-opus-4-6", "claude-opus-4-8",
                                   "claude-haiku-5-5", "claude-opus-5-5"])
def test_current_models_on_vertex_by_their_claude_api_ids(
        model: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """From the 4.6 generation on, a Vertex id is the Claude API id (no @date)."""
    with cloud_env.vertex(monkeypatch, tmp_path) as fake:
        code = main(["llm", "check", "--provider", "vertex", "--model", model,
                     "--worker", "judge"])
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    assert f"vertex model {model} as {model} (active on vertex)" in captured.out
    assert any(r.path.endswith(f"/models/{model}:rawPredict") for r in fake.requests)


def test_a_platforms_file_adds_a_vertex_model_without_a_release(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    extra = tmp_path / "platforms.json"
    extra.write_text(json.dumps({"platforms": {"vertex": {"models": {
        "claude-sonnet-5": {"id": "claude-sonnet-5", "source": "our Model Garden"}}}}}))
    argv = ["llm", "check", "--provider", "vertex", "--model", "claude-sonnet-5",
            "--worker", "judge"]
    with cloud_env.vertex(monkeypatch, tmp_path) as fake:
        assert main(argv) == 2  # not in the packaged data: one line saying how to add it
        err = capsys.readouterr().err
        assert "has no vertex model id" in err and "JUDGEFLOW_LLM__PLATFORMS_FILE" in err
        monkeypatch.setenv("JUDGEFLOW_LLM__PLATFORMS_FILE", str(extra))
        fake.data = platforms.load(extra)["vertex"]  # the platform serves it
        code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "vertex model claude-sonnet-5 as claude-sonnet-5 (active on vertex)" in out
    assert any(r.path.endswith("/models/claude-sonnet-5:rawPredict") for r in fake.requests)


@pytest.mark.parametrize(("text", "says"), [
    ('{"platforms": {"azure": {}}}', "unknown platform 'azure'; platforms: bedrock, vertex"),
    ('{"platforms": {"vertex": {"models": {"m": {}}}}}', "platform 'vertex': models.m.id: "
     "Field required"),
    ("{bad", "is not valid JSON"), ("[]", 'must be {"platforms": {...}}')])
def test_a_bad_platforms_file_is_one_line(text: str, says: str, monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "platforms.json"
    bad.write_text(text)
    with cloud_env.vertex(monkeypatch, tmp_path):
        monkeypatch.setenv("JUDGEFLOW_LLM__PLATFORMS_FILE", str(bad))
        assert main(["llm", "check", "--provider", "vertex", "--model",
                     "claude-haiku-4-5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("judgeflow: llm check: the platforms file ") and says in err, err
    assert err.count("\n") == 1
