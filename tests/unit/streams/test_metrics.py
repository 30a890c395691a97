"""The metrics endpoint: an address that cannot be bound is the operator's to fix, one line
naming the settings (exit 2), never an OSError traceback."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from streams.exit_codes import CommandError, ExitCode
from streams.metrics import Metrics


@pytest.fixture()
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def test_a_port_in_use_is_one_line_naming_the_settings(busy_port: int) -> None:
    with pytest.raises(CommandError) as caught:
        Metrics.create().serve(busy_port, "127.0.0.1")
    assert caught.value.code == ExitCode.USAGE
    assert str(caught.value) == (f"cannot serve metrics on 127.0.0.1:{busy_port} "
                                 "(JUDGEFLOW_METRICS_HOST, JUDGEFLOW_METRICS_PORT): "
                                 "Address already in use")


@pytest.mark.parametrize("host", ["999.1.1.1", "no such host.invalid"])
def test_a_host_that_is_no_address_is_one_line_naming_the_settings(host: str) -> None:
    with pytest.raises(CommandError, match=rf"^cannot serve metrics on {host}:1 \("
                                           "JUDGEFLOW_METRICS_HOST, JUDGEFLOW_METRICS_PORT\\): "):
        Metrics.create().serve(1, host)


def test_port_0_serves_nothing(busy_port: int) -> None:
    Metrics.create().serve(0, "999.1.1.1")  # off: the host is never looked up
