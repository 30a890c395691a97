"""What the judge's reasoning presents as a quote (table-driven): every kind of quote mark,
apostrophes inside single quotes, and passages presented as quotes without marks (the
chart-review skill: never invent quotes) — while ordinary apostrophes quote nothing."""

from __future__ import annotations

from typing import Any

import pytest

from agents.judge.quotes import field_quote, is_wrapped, quoted_spans
from agents.judge.validate import check_reasoning
from schemas.chart_review import JudgeAnalysis
from tests.unit.agents.judge.fixtures import NOTES
from tests.unit.agents.judge.test_validate import GOOD

SPAN = "the patient's HbA1c was 9.9 percent on review"
CURLY = SPAN.replace("'", "\u2019")
PLAIN = "the HbA1c was 9.9 percent on review"


@pytest.mark.parametrize(("text", "spans"), [
    # marks of every kind
    (f'The note states "{PLAIN}".', [PLAIN]),
    (f"The note states \u201c{PLAIN}\u201d.", [PLAIN]),
    (f"The note states \u201e{PLAIN}\u201c.", [PLAIN]),
    (f"The note states '{PLAIN}'.", [PLAIN]),
    (f"The note states \u2018{PLAIN}\u2019.", [PLAIN]),
    (f"The note states \u201a{PLAIN}\u2018.", [PLAIN]),
    (f"The note states \u00ab{PLAIN}\u00bb.", [PLAIN]),
    (f"The note states \u00bb{PLAIN}\u00ab.", [PLAIN]),
    (f"The note states \u2039{PLAIN}\u203a.", [PLAIN]),
    (f"The note states \u300c{PLAIN}\u300d.", [PLAIN]),
    (f"The note states \u300e{PLAIN}\u300f.", [PLAIN]),
    (f"The note states \uff02{PLAIN}\uff02.", [PLAIN]),
    (f"The note states `{PLAIN}`.", [PLAIN]),
    (f"The note states ``{PLAIN}''.", [PLAIN]),
    # apostrophes inside the quotation belong to it
    (f"The note states '{SPAN}'.", [SPAN]),
    (f"The note states \u2018{CURLY}\u2019.", [CURLY]),
    (f"The note states '{CURLY}'.", [CURLY]),
    (f"The note states ``{SPAN}''.", [SPAN]),
    (f'The note states "{SPAN}".', [SPAN]),
    (f"The note states '{SPAN}', and agent B's rationale ignores it.", [SPAN]),
    (f"Agent A's quote '{SPAN}' isn't in n01.", [SPAN]),
    # no marks: a reporting word and a colon, or a block quote
    (f"The note reads: {PLAIN}. Agent B missed it.", [PLAIN]),
    (f"n01 documents: {SPAN}; agent B missed it.", [SPAN]),
    (f"Verbatim: {PLAIN}", [PLAIN]),
    (f"> {PLAIN}\nAgent B missed it.", [PLAIN]),
    (f'The note reads: "{PLAIN}". Agent B missed it.', [PLAIN]),  # counted once
    # ordinary apostrophes and value names quote nothing
    ("The patient's chart and the agents' answers disagree on the date.", []),
    ("Agent B's reading isn't the patient's own diagnosis, it's the mother's.", []),
    ("The patient\u2019s A1c and the doctors\u2019 notes don\u2019t agree on the date.", []),
    ("He wrote 'yes' and then 'no_info' there; `true` is the canonical form.", []),
    ("Other notes: n01, n02. Agent A's answer: true, because n01 documents it.", []),
    ("Reasoning: the problem list documents type 2 diabetes. Agent B misread it.", []),
])
def test_spans_presented_as_quotes(text: str, spans: list[str]) -> None:
    assert quoted_spans(text) == spans


def analysis(reasoning: str) -> JudgeAnalysis:
    return JudgeAnalysis.model_validate({**GOOD, "reasoning": reasoning})


@pytest.mark.parametrize(("reasoning", "flagged"), [
    # the audit's case: an invented quote with an apostrophe in single quotes
    (f"The note states '{SPAN}'. Agent B misread the family history.", True),
    (f"The note states '{PLAIN}'. Agent B misread the family history.", True),
    (f"The note states ``{SPAN}''. Agent B misread the family history.", True),
    (f"The note states \u300c{PLAIN}\u300d. Agent B misread the family history.", True),
    (f"The note reads: {PLAIN}. Agent B misread the family history.", True),
    # real quotes pass, whatever presents them
    ("The note states 'Type 2 diabetes mellitus, on metformin since 2016'. Agent B "
     "misread the family history.", False),
    ("The note reads: Type 2 diabetes mellitus, on metformin since 2016. Agent B "
     "misread the family history.", False),
    ("The note states \u300cNo personal history of diabetes was recorded\u300d. Agent B "
     "took it as the patient's.", False),
    ("The patient's problem list documents it. Agent B's reading isn't the patient's.",
     False),
])
def test_check_reasoning_flags_invented_quotes(reasoning: str, flagged: bool) -> None:
    checked, problems = check_reasoning(analysis(reasoning), list(NOTES.values()))
    assert [p.type for p in problems if p.type == "unverified_quote"] == (
        ["unverified_quote"] if flagged else [])
    assert checked.judge_confidence == ("medium" if flagged else "high")


@pytest.mark.parametrize(("text", "wrapped", "inner"), [
    ("\u300cproblem list entry\u300d", True, "problem list entry"),
    ("`problem list entry`.", True, "problem list entry"),
    ("problem list entry", False, "problem list entry"),
])
def test_a_field_wrapped_in_marks(text: str, wrapped: bool, inner: Any) -> None:
    assert is_wrapped(text) is wrapped and field_quote(text) == inner
