"""One fake Messages API server per test module, reset before every test (stopping a
server costs half a second, so they are shared)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tools.fakes.fake_anthropic import FakeAnthropic, _default_responder
from tools.fakes.fake_models import load as load_models
from tools.fakes.fake_rules import State


@pytest.fixture(scope="module")
def _module_fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as f:
        yield f


@pytest.fixture()
def fake(_module_fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    f = _module_fake
    with f._lock:
        f.queue.clear()
        f.requests.clear()
    f.responder = _default_responder
    f.state = State()
    f.default_retry_after = 1.0
    f.models = load_models()  # a test may change what the Models API serves
    f.fingerprints.clear()
    f.strict = True
    return f
