"""``bench detect --rounds R``: the forward-only agent and the detect worker run R times on
fresh backlogs, alternating which goes first, and the reported ratio is the rounds' median
(no broker: the phases are replaced by recorded results)."""

from __future__ import annotations

from typing import Any

import pytest

from streams.settings import Settings
from tools.bench import detect_runs
from tools.bench.detect import BenchResult


def _fake_phases(monkeypatch: pytest.MonkeyPatch, forward: list[float], detect: list[float]
                 ) -> list[str]:
    """Each phase returns the next recorded rate (events per second); returns the order,
    with ``drop PREFIX [KEPT...]`` for each deletion of a finished run's topics."""
    order: list[str] = []
    rates = {"forward": iter(forward), "detect": iter(detect)}

    def result(name: str) -> BenchResult:
        order.append(name)
        return BenchResult(1000, 1000 / next(rates[name]))

    async def nothing(*_: Any, **__: Any) -> None:
        return None

    async def passthrough(*_: Any, **__: Any) -> BenchResult:
        return BenchResult(1000, 0.1)

    async def drop(_: Any, prefix: str, keep: Any = ()) -> None:
        order.append(" ".join(["drop", prefix, *keep]))

    monkeypatch.setattr(detect_runs, "drop_topics", drop)
    monkeypatch.setattr(detect_runs, "_fresh", lambda settings, partitions: settings)
    monkeypatch.setattr(detect_runs, "send_all", nothing)
    monkeypatch.setattr(detect_runs, "synthetic_answers", lambda s, n: [(b"k", b"v")] * n)
    monkeypatch.setattr(detect_runs, "passthrough", passthrough)
    monkeypatch.setattr(detect_runs, "_forward", lambda *a, **k: result("forward"))
    monkeypatch.setattr(detect_runs, "run_worker_until", lambda *a, **k: result("detect"))
    return order


def test_rounds_alternate_and_report_the_median(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    order = _fake_phases(monkeypatch, forward=[1000, 400, 1000], detect=[900, 1000, 500])
    ratios = detect_runs.detect_runs(Settings(), 1000, 60.0, rounds=3)
    runs = [o for o in order if not o.startswith("drop")]
    assert runs == ["forward", "detect", "detect", "forward", "forward", "detect"]
    # rounds 0.9x, 2.5x, 0.5x: the median, not the mean (1.3x) nor one lucky round
    assert ratios["detect/forward"] == pytest.approx(0.9)
    assert ratios["forward ev/s"] == 1000 and ratios["detect ev/s"] == 1000
    out = capsys.readouterr().out
    assert "by round: 0.90x, 2.50x, 0.50x; best detect / best forward: 1.00x" in out
    assert "(median): 0.90x (goal >= 0.6x: met)" in out
    assert "detect: 1,000 answers/s in one worker process (goal >= 1,000: met)" in out


def test_one_round_is_the_single_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    order = _fake_phases(monkeypatch, forward=[1000], detect=[800])
    ratios = detect_runs.detect_runs(Settings(), 1000, 60.0)
    assert [o for o in order if not o.startswith("drop")] == ["forward", "detect"]
    assert ratios["detect/forward"] == pytest.approx(0.8)


def test_cli_rounds_must_be_positive() -> None:
    from cli.main import build_parser

    assert build_parser().parse_args(["bench", "detect", "--rounds", "3"]).rounds == 3
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "detect", "--rounds", "0"])


def test_each_run_meets_the_broker_without_the_earlier_runs_outputs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded broker rewrites all it stores about once a second: a run's outputs are
    deleted before the next run, the backlog once both runs of a round read it."""
    order = _fake_phases(monkeypatch, forward=[1000, 1000], detect=[900, 900])
    detect_runs.detect_runs(Settings(), 1000, 60.0, rounds=2)
    answers = Settings().topics.agent_answers  # chart-review.agent-answers.v1: prefix chart-review
    assert order == [
        "drop chart-review.passthrough", "forward", "drop chart-review.forward", "detect",
        "drop chart-review",
        # round 2, detect first: its outputs go, the backlog and the (empty) sink stay
        "detect", f"drop chart-review {answers} chart-review.forward", "forward",
        "drop chart-review.forward", "drop chart-review"]
