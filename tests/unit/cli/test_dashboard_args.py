"""``judgeflow dashboard --port``: a port outside 0..65535 is a usage error (exit 2), not an
OverflowError from ``bind()``."""

from __future__ import annotations

import argparse

import pytest

from cli.dashboard import DEFAULT_PORT, add_arguments


def _parse(*args: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="judgeflow dashboard")
    add_arguments(p)
    return p.parse_args(list(args))


@pytest.mark.parametrize(("given", "port"), [("0", 0), ("8080", 8080), ("65535", 65535)])
def test_ports_in_range(given: str, port: int) -> None:
    assert _parse("--port", given).port == port


def test_default_port() -> None:
    assert _parse().port == DEFAULT_PORT


@pytest.mark.parametrize("given", ["99999", "65536", "-1", "http"])
def test_ports_out_of_range_are_usage_errors(given: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        _parse("--port", given)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--port" in err and given in err and "Traceback" not in err
