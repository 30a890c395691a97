"""``judgeflow produce`` checks its input before it touches Kafka: a missing file, a directory,
an unknown topic and invalid lines are one-line errors even when no broker is reachable."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.main import main
from cli.produce import prepare
from schemas.registry import CONTRACTS
from tests.unit.streams import probe_cases as probe

ANSWERS = "chart-review.agent-answers.v1"
DOWN = ["--bootstrap-servers", "127.0.0.1:1"]


@pytest.mark.parametrize("name, says", [("missing.jsonl", "no such file"),
                                        (".", "is a directory")])
def test_unreadable_file_is_a_one_line_error(tmp_path: Path, name: str, says: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*DOWN, "produce", ANSWERS, str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Kafka" not in err and len(err.strip().splitlines()) == 1


def test_unknown_topic_lists_the_known_ones(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "a.jsonl"
    f.write_text("{}\n")
    assert main([*DOWN, "produce", "chart-review.agent-answer.v1", str(f)]) == 2
    err = capsys.readouterr().err
    assert "no schema known for topic 'chart-review.agent-answer.v1'" in err
    assert ANSWERS in err and "--raw" in err


def test_bad_lines_are_reported_before_connecting(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "a.jsonl"
    f.write_bytes(b"not json\n" + probe.dumps(probe.agent_answer()) + b"\n")
    assert main([*DOWN, "produce", ANSWERS, str(f)]) == 1  # then the broker is unreachable
    err = capsys.readouterr().err
    assert err.index("line 1: rejected: invalid_json") < err.index("cannot reach Kafka")


#: (file content, or None for stdin at its end; exit status; the summary line)
NOTHING_TO_SEND = [
    ("", 0, "sent 0, rejected 0"),
    ("\n  \n", 0, "sent 0, rejected 0"),
    (None, 0, "sent 0, rejected 0"),
    ("not json\n{}\n", 1, "sent 0, rejected 2"),
]


@pytest.mark.parametrize(("content", "code", "summary"), NOTHING_TO_SEND,
                         ids=["empty", "blank lines", "stdin", "every line rejected"])
def test_nothing_to_send_never_connects_and_prints_the_summary(
        content: str | None, code: int, summary: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io
    import sys

    f = tmp_path / "a.jsonl"
    if content is None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    else:
        f.write_text(content)
    assert main([*DOWN, "produce", ANSWERS, "-" if content is None else str(f)]) == code
    out, err = capsys.readouterr()
    assert out == f"{ANSWERS}: {summary}\n"
    assert "Kafka" not in err and "Traceback" not in err


#: What ``produce`` must refuse of the probe's records (issue 25): every contract breach the
#: workers dead-letter (unknown tasks, criteria and cases depend on the workers' settings).
PRODUCE_REFUSES = ("schema_error", "oversized", "invalid_json")


@pytest.mark.parametrize(("contract", "name", "raw", "expected"), [
    (attr, *case) for attr, cases in (("agent_answers", probe.answers()),
                                      ("judge_jobs", probe.jobs()),
                                      ("debrief_requests", probe.requests()),
                                      ("adjudications", probe.adjudications()))
    for case in cases])
def test_produce_refuses_what_the_workers_dead_letter(contract: str, name: str, raw: bytes,
                                                      expected: str | None) -> None:
    assert b"\n" not in raw  # one JSON Lines line (orjson escapes control characters)
    refused = True
    try:
        prepare(raw, CONTRACTS[contract])
    except ValueError as exc:
        assert str(exc).startswith(f"{expected}: "), (name, str(exc))
    else:
        refused = False
    assert refused is (expected in PRODUCE_REFUSES), name
