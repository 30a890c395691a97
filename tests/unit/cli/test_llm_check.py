"""``judgeflow llm check`` against the fake API (ANTHROPIC_BASE_URL): one call per worker
kind with model, latency, tokens, cache and cost; no key -> says so, exit 0."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.main import main
from streams.settings import SAMPLE_DIR
from tools.fakes.fake_anthropic import FakeAnthropic


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as f:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f.base_url)
        yield f


def test_without_a_key_it_says_so_and_exits_0(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["llm", "check"]) == 0
    assert "ANTHROPIC_API_KEY is not set" in capsys.readouterr().out


def test_one_call_per_worker_kind(fake: FakeAnthropic,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["llm", "check", "--calls", "2"]) == 0
    out = capsys.readouterr().out
    assert "model claude-sonnet-5-5 (active; cache minimum 2048 tokens" in out
    assert "structured outputs yes, batch yes, efforts low, medium, high, xhigh" in out
    for kind in ("judge", "debrief"):
        assert f"{kind}: call 1: model claude-sonnet-5-5" in out
        assert f"{kind}: cache breakpoint 1:" in out
    assert "cost $" in out and "cache hit" in out
    assert len(fake.message_requests()) == 4


@pytest.mark.parametrize(("model", "says"), [("claude-sonnet-4-5", "retired"),
                                             ("claude-nope-1", "not in the model catalogue")])
def test_a_model_it_cannot_use_exits_2(fake: FakeAnthropic, capsys: pytest.CaptureFixture[str],
                                       model: str, says: str) -> None:
    assert main(["llm", "check", "--model", model]) == 2
    err = capsys.readouterr().err  # one `judgeflow:` line through the one error map
    assert err.startswith("judgeflow: llm check: ") and says in err
    assert fake.message_requests() == []


def test_a_failing_call_exits_1(fake: FakeAnthropic,
                                capsys: pytest.CaptureFixture[str]) -> None:
    from tools.fakes.fake_anthropic import Reply

    fake.responder = lambda body: Reply.spend_limit()
    assert main(["llm", "check", "--worker", "debrief"]) == 1
    assert "FAILED: spend_limit" in capsys.readouterr().out


def test_the_debrief_sample_takes_the_workers_path(fake: FakeAnthropic,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """On a model with structured outputs the worker sends the rules alone as its cached
    prefix (no tool schema): the prefix llm check counts must be that one, not the tool
    path's larger one, or it would report a prefix the worker never sends."""
    from agents.debrief.prompt import SYSTEM_STRUCTURED

    assert main(["llm", "check", "--worker", "debrief"]) == 0
    out = capsys.readouterr().out
    (sent,) = fake.message_requests()
    assert "tools" not in sent.body and "format" in sent.body["output_config"]
    assert sent.body["system"][0]["text"] == SYSTEM_STRUCTURED
    # the fake counts the structured prefix below every 5.5 model's minimum
    assert "debrief: cache breakpoint 1:" in out and "NOT cached" in out


def test_each_cache_breakpoint_line_is_printed_once(
        fake: FakeAnthropic, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    # printed on stdout; not repeated by the start-up report's log line on stderr
    caplog.set_level("INFO")
    assert main(["llm", "check", "--worker", "judge"]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("judge: cache breakpoint 1:") == 1
    logged = [r.getMessage() for r in caplog.records if "cache breakpoint" in r.getMessage()]
    assert not logged and "cache breakpoint" not in captured.err


def test_a_prefix_under_the_models_minimum_is_said_not_silent(
        fake: FakeAnthropic, capsys: pytest.CaptureFixture[str]) -> None:
    # the sample's judge prefix (about 4k tokens) is under Haiku 4.5's 4,096: the worker
    # sends no breakpoint there, and the check says so instead of printing no cache line
    assert main(["llm", "check", "--worker", "judge", "--model", "claude-haiku-4-5"]) == 0
    out = capsys.readouterr().out
    assert ("judge: no cache breakpoint sent: the prefix is under claude-haiku-4-5's minimum "
            "of 4096 tokens") in out and "judge: cache breakpoint" not in out
    assert "cache_control" not in str(fake.message_requests()[0].body["system"])


def test_a_hospitals_own_skill_folder_is_checked_with_the_packaged_sample(
        fake: FakeAnthropic, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A deployment's skill folder has no answers.jsonl beside it (that is the sample's
    layout): llm check, the smoke test after a model or key change, must still send its
    judge call, and say whose request it was (it once crashed with a traceback)."""
    skill = tmp_path / "own" / "skill"
    shutil.copytree(SAMPLE_DIR / "skill", skill)
    monkeypatch.setenv("JUDGEFLOW_SKILL_DIR", str(skill))
    monkeypatch.setenv("JUDGEFLOW_CHARTS_DIR", str(tmp_path / "charts"))
    assert main(["llm", "check", "--worker", "judge"]) == 0
    out = capsys.readouterr().out
    assert "the request is the packaged sample's" in out and "judge: call 1: model" in out
    assert len(fake.message_requests()) == 1


@pytest.mark.parametrize(("effort", "offered", "shown"), [
    (None, (), "the model default"),
    (None, ("low", "high"), "the model default"),
    ("high", ("low", "high"), "high"),
    # a declared local model lists none: the provider warns and does not send it
    ("high", (), "high not sent (the model lists no efforts)"),
])
def test_the_effort_line_says_what_the_calls_carry(effort: str | None,
                                                   offered: tuple[str, ...],
                                                   shown: str) -> None:
    from cli.llm import _effort

    assert _effort(effort, offered) == shown
