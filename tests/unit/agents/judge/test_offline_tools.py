"""The offline judge uses the chart tools when offered them: a search for the criterion's
keywords over the whole chart, reads of the hits in notes no agent cited, pointers there."""

from __future__ import annotations

import pytest

from agents.context.charts import ChartStore
from agents.judge.judge import Judge
from agents.providers.factory import OfflineProvider
from agents.settings import Settings
from schemas.skill import Skill
from tests.unit.agents.judge.fixtures import NOTES, disagreement


@pytest.mark.parametrize(("mode", "max_calls", "reads"), [
    ("off", 8, []), ("on", 8, ["n04"]), ("on", 1, []), ("auto", 8, []),
])
async def test_offline_tool_plan(skill: Skill, store: ChartStore, mode: str, max_calls: int,
                                 reads: list[str]) -> None:
    s = Settings(chart_tools={"mode": mode, "max_calls": max_calls})
    r = await Judge(s, skill, store, OfflineProvider()).judge(disagreement())
    got = [a.note_id for a in r.consulted if a.tool == "read_note"]
    assert got == reads
    if mode == "on":
        assert r.consulted[0].tool == "search_notes" and r.consulted[0].hits
    pointed = {(p.note_id, p.offsets) for p in r.analysis.evidence_pointers}
    for a in r.consulted:
        if a.tool == "read_note":
            assert (a.note_id, (a.start, a.end)) in pointed
            assert "A1c" in NOTES["n04"][a.start:a.end]
    assert r.status in ("ok", "flagged") and r.usage.llm_calls == 0
