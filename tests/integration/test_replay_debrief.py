"""`replay debrief` works like `replay judge`: another model is another prompt version, so
its evaluations form a new series (distinct ids, series headers, ``supersedes``); a rerun
publishes and pays for nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.providers.anthropic import AnthropicProvider
from agents.providers.base import TokenUsage
from agents.providers.factory import cost_usd
from agents.replay.run import Options, replay
from agents.settings import Settings
from streams.topics import ensure_topics
from tests.helpers import collect, label_of, produce, values
from tests.helpers import test_settings as make_settings
from tests.integration.test_debrief_worker import LLM, _requests
from tests.unit.agents.debrief.support import attending
from tests.unit.streams import probe_cases as probe
from tools.fakes.fake_anthropic import FakeAnthropic

pytestmark = pytest.mark.integration


def _with_model(s: Settings, model: str) -> Settings:
    return s.model_copy(update={"llm": s.llm.model_copy(update={"model": model})})


async def test_two_models_two_series(bootstrap: str, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    a = make_settings(bootstrap, llm=LLM)
    b = _with_model(a, "claude-opus-5-5")
    await ensure_topics(a)
    reqs = [r for r in _requests() if r[0] in (b"req-cp-001", b"req-sep-002", b"req-ank-001")]
    await produce(bootstrap, a.topics.debrief_requests, reqs)
    with FakeAnthropic(responder=attending) as fake:
        for s in (a, b, b):
            await replay(s, Options("debrief"),
                         provider=AnthropicProvider(s.llm, base_url=fake.base_url))
        paid = len(fake.message_requests())
    assert paid == 6  # 3 per model; the rerun under b paid for nothing
    records = await collect(bootstrap, a.topics.case_evaluations, until=6, timeout=20, quiet=1)
    evs = values(records)
    assert len(evs) == 6 and len({e["evaluation_id"] for e in evs}) == 6
    versions = [e["prompt_version"] for e in evs]
    assert len(set(versions)) == 2 and {label_of(v) for v in versions} == {"debrief-v2"}
    [va] = {e["prompt_version"] for e in evs if e["model"] == "claude-sonnet-5-5"}
    first = {e["request_id"]: e["evaluation_id"] for e in evs if e["prompt_version"] == va}
    assert len(first) == 3
    for rec, ev in zip(records, evs, strict=True):
        h = {k: v.decode() for k, v in rec.headers}
        assert (h["result_id"], h["evaluation_id"], h["prompt_version"], h["request_id"]) == (
            ev["evaluation_id"], ev["evaluation_id"], ev["prompt_version"], ev["request_id"])
        assert ev["supersedes"] == h.get("supersedes") == (
            None if ev["prompt_version"] == va else first[ev["request_id"]])


async def test_debrief_batch_replay_is_priced_at_the_batch_discount(
        bootstrap: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    s = make_settings(bootstrap, llm=LLM)
    await ensure_topics(s)
    reqs = [r for r in _requests() if r[0] in (b"req-cp-001", b"req-ank-001")]
    await produce(bootstrap, s.topics.debrief_requests, reqs)
    with FakeAnthropic(responder=attending) as fake:
        fake.batches.polls = 2
        out = await replay(s, Options("debrief", batch=True, poll_seconds=0.01),
                           provider=AnthropicProvider(s.llm, base_url=fake.base_url))
        assert not fake.message_requests() and len(fake.batches.succeeded) == 2
    assert out.tally is not None and out.tally.judged == 2
    evs = values(await collect(bootstrap, s.topics.case_evaluations, until=2, timeout=10,
                               quiet=0.5))
    for ev in evs:
        u = ev["usage"]
        usage = TokenUsage(u["input_tokens"], u["output_tokens"],
                           u["cache_read_input_tokens"], u["cache_creation_input_tokens"])
        assert u["cost_usd"] == pytest.approx(cost_usd(usage, ev["model"], s.llm, batch=True))


async def test_replay_grades_no_case_outside_the_catalogue(bootstrap: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """As the worker: with ``debrief_cases`` set, a request for another case is neither
    priced nor graded by ``replay debrief`` (it was graded and paid)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    good = probe.request(0)
    s = make_settings(bootstrap, llm=LLM, debrief_cases=(good["case_id"],))
    await ensure_topics(s)
    other = probe.request(2, case_id=probe.UNKNOWN_CASE)
    await produce(bootstrap, s.topics.debrief_requests,
                  [(b"k", probe.dumps(good)), (b"k", probe.dumps(other))])
    with FakeAnthropic(responder=attending) as fake:
        await replay(s, Options("debrief"),
                     provider=AnthropicProvider(s.llm, base_url=fake.base_url))
        paid = len(fake.message_requests())
    evs = values(await collect(bootstrap, s.topics.case_evaluations, until=1, timeout=20,
                               quiet=1))
    assert [e["request_id"] for e in evs] == [good["request_id"]]
    assert paid == evs[0]["usage"]["llm_calls"]
