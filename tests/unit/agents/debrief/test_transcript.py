import pytest

from agents.debrief.transcript import quote_in_log, section_lines
from tests.unit.agents.debrief.support import sample

LOG = sample("req-cp-001").encounter_log


@pytest.mark.parametrize(("quote", "found"), [
    ("My dad died of a heart attack at fifty-two.", True),
    ("my dad died of a heart attack", True),               # case-insensitive
    ("\u201cDown my left arm and into my jaw\u201d", True),  # curly quotes, no final dot
    ("Down my left arm \u2026 jaw", True),                   # ellipsis elides, order kept
    ("jaw ... Down my left arm", False),                     # pieces out of order
    ("ST elevation in II, III and aVF", True),               # a test result
    ("activated the cath lab", True),                        # an escalation
    ("My mum had a stroke", False),                          # invented
    ("", True),
])
def test_quote_must_occur_in_the_encounter_log(quote: str, found: bool) -> None:
    assert quote_in_log(quote, LOG) is found


def test_sections_cover_every_part_of_the_log() -> None:
    lines = section_lines(LOG)
    assert "12-lead ECG ST elevation in II, III and aVF" in lines["tests"]
    assert "aspirin 300 mg chewed" in lines["treatments"]
    assert lines["diagnosis"] == ["inferior STEMI"]
    assert len(lines["any"]) == sum(len(v) for k, v in lines.items() if k != "any")
