import asyncio

from agents.debrief import summarize
from agents.debrief.grader import DebriefGrader
from agents.providers.factory import OfflineProvider
from agents.settings import Settings
from tests.unit.agents.debrief.support import sample


def test_one_line_summary_shows_case_verdict_and_breach() -> None:
    ev = asyncio.run(DebriefGrader(Settings(), OfflineProvider()).evaluate(sample("req-sep-002")))
    line = summarize(ev.model_dump(mode="json"))
    assert "\n" not in line
    assert line.startswith("adult-sepsis-uti")
    assert "safety breach: yes (contraindicated_drug)" in line
    ok = asyncio.run(DebriefGrader(Settings(), OfflineProvider()).evaluate(sample("req-ank-001")))
    assert "safety breach: no" in summarize(ok) and "auto-rubric" in summarize(ok)
