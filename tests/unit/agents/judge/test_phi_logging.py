"""A judge request at DEBUG against the fake HTTP API logs no note text, quote or name."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.context.charts import ChartStore
from agents.judge.judge import Judge
from agents.providers.anthropic import AnthropicProvider
from agents.settings import Settings
from schemas.skill import Skill
from streams.logsafety import UNSAFE_ENV, floor_of, guard_third_party_loggers
from tests.unit.agents.judge.fixtures import PATIENT, answer, job
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

NAME, MRN = "Marguerite Okonkwo-Lindqvist", "MRN 88412207"
NOTE = (f"Patient {NAME}, {MRN}. PROBLEM LIST: Type 2 diabetes mellitus, on metformin since "
        "2016; sister with lupus nephritis.\n")
QUOTE = "Type 2 diabetes mellitus, on metformin since"
SECRETS = (NAME, MRN, "lupus nephritis", QUOTE, "metformin since 2016")
ANSWER = {"suggested_answer": True,
          "reasoning": f'The problem list says "{QUOTE}". Agent B misread it.',
          "evidence_pointers": [{"note_id": "n01", "what_to_look_for": "problem list",
                                 "offsets": None}],
          "agent_correctness": "agent_a", "classification_hint": "agent_b_error",
          "judge_confidence": "high"}


@pytest.fixture()
def debug_log() -> Iterator[io.StringIO]:
    """Root at DEBUG with one captured handler, restored afterwards."""
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    saved = root.level, {n: logging.getLogger(n).level for n in ("anthropic", "httpx",
                                                                 "httpcore")}
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    for name in saved[1]:
        logging.getLogger(name).setLevel(logging.NOTSET)
    yield buf
    root.removeHandler(handler)
    root.setLevel(saved[0])
    for name, level in saved[1].items():
        logging.getLogger(name).setLevel(level)


async def judge_once(fake: FakeAnthropic, skill: Skill, tmp_path: Path) -> None:
    (tmp_path / "c" / PATIENT).mkdir(parents=True)
    (tmp_path / "c" / PATIENT / "n01.txt").write_text(NOTE)
    fake.enqueue(Reply.message(text=json.dumps(ANSWER)))
    s = Settings(llm={"provider": "anthropic", "model": "claude-sonnet-5-5",
                      "sdk_max_retries": 0, "deadline_seconds": 5.0})
    judge = Judge(s, skill, ChartStore(tmp_path / "c"),
                  AnthropicProvider(s.llm, base_url=fake.base_url))
    j = job("disagreement", answer("default", True, quotes=(("n01", QUOTE),)),
            answer("skeptical", False, quotes=(("n01", "sister with lupus nephritis"),)))
    result = await judge.judge(j)
    assert result.status == "ok"  # the call really went through the SDK


def hits(text: str) -> list[str]:
    return [s for s in SECRETS if s.lower() in text.lower()]


async def test_debug_log_carries_no_patient_data(fake: FakeAnthropic, skill: Skill,
                                                 tmp_path: Path,
                                                 debug_log: io.StringIO) -> None:
    assert guard_third_party_loggers(env={}, handlers=[logging.getLogger().handlers[-1]])
    await judge_once(fake, skill, tmp_path)
    text = debug_log.getvalue()
    assert "judged" in text  # our own DEBUG/INFO lines are still there
    assert hits(text) == []


async def test_no_transport_line_below_warning_at_debug(fake: FakeAnthropic, skill: Skill,
                                                        tmp_path: Path,
                                                        debug_log: io.StringIO) -> None:
    """Issue 25: the SDK's transport (``httpcore2``, a renamed fork, lazily imported on the
    first request) logged every response's headers at DEBUG: not one such line passes."""
    assert guard_third_party_loggers(env={}, handlers=[logging.getLogger().handlers[-1]])
    await judge_once(fake, skill, tmp_path)
    lines = debug_log.getvalue().splitlines()
    transport = [line for line in lines if line.split(" ", 2)[1].startswith(
        ("httpcore", "httpx", "h11", "anthropic")) and line.split(" ", 1)[0] in
        ("DEBUG", "INFO")]
    assert transport == [], transport[:3]
    assert not any("response_headers" in line for line in lines)


async def test_the_unsafe_switch_lets_request_logs_through(fake: FakeAnthropic, skill: Skill,
                                                           tmp_path: Path,
                                                           debug_log: io.StringIO) -> None:
    """The control: without the guard the SDK's DEBUG request log does carry the notes, so
    the test above would catch a regression."""
    assert not guard_third_party_loggers(env={UNSAFE_ENV: "1"})
    await judge_once(fake, skill, tmp_path)
    assert NAME in debug_log.getvalue()


@pytest.mark.parametrize(("name", "phi"), [
    ("anthropic", True), ("anthropic._base_client", True), ("httpx", True),
    ("httpcore.http11", True), ("httpx2", True), ("agents.judge.judge", False),
    ("httpcore2.http11", True), ("httpcore2.connection", True), ("h11", True),
    ("httpcore3.http2", True), ("httpxyz", False),
    ("anthropicx", False), ("streams.runner", False), ("aiokafka.conn", True),
    ("aiokafka.consumer.fetcher", True),
    # group membership lines carry no record contents: kept at INFO for operators
    ("aiokafka.consumer.group_coordinator", False)])
def test_which_loggers_are_guarded(name: str, phi: bool) -> None:
    """The floor the runtime filter applies: WARNING or above for a family whose records
    below WARNING may carry patient data."""
    floor = floor_of(name)
    assert (floor is not None and floor >= logging.WARNING) is phi
