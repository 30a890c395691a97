"""The kubelet's probes reach the page without a token and from any Host, and say only
whether it answers (``/livez``) and whether its feed follows the topics (``/readyz``);
everything else stays behind the sign-in."""

from __future__ import annotations

from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from agents.context.charts import ChartStore
from dashboard.feed import FeedStatus, Hub
from dashboard.sessions import Access
from dashboard.web import State, create_app
from dashboard.window import Window
from tests.unit.dashboard.audit_sink import RecordedAudit


async def test_probes_need_no_token_and_tell_nothing(tmp_path: Path) -> None:
    state = State(Window(10), ChartStore(tmp_path), Hub(), FeedStatus(),
                  access=Access(token="t" * 20), audit_trail=RecordedAudit())
    c: TestClient = TestClient(TestServer(create_app(state)))  # type: ignore[type-arg]
    await c.start_server()
    try:
        pod = {"Host": "10.1.2.3:8765"}
        live = await c.get("/livez", headers=pod)
        assert (live.status, await live.text()) == (200, "ok\n")
        assert (await c.get("/readyz", headers=pod)).status == 503  # the feed has no partition
        state.feed.assigned = 15
        ready = await c.get("/readyz", headers=pod)
        assert (ready.status, await ready.text()) == (200, "ready\n")
        assert (await c.get("/api/health")).status == 401  # the rest still needs the token
        assert (await c.get("/api/health", headers=pod)).status == 421
        assert (await c.post("/livez")).status != 200
    finally:
        await c.close()
