"""Shared fixtures. The broker is real (noida-db on 127.0.0.1), started here and stopped by
PID when the session ends; nothing started by a test outlives the run."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tools.broker import EmbeddedBroker


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    data = tmp_path_factory.mktemp("broker")
    with EmbeddedBroker(data_dir=data) as b:
        os.environ.setdefault("JUDGEFLOW_TEST_BROKER", b.bootstrap)
        yield b


@pytest.fixture()
def bootstrap(broker: EmbeddedBroker) -> str:
    return broker.bootstrap
