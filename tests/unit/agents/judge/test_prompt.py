"""The prompt keeps a byte-identical static prefix per criterion (prompt caching)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.context.assemble import gather
from agents.judge.prompt import build_request, cache_marks, estimate_tokens
from schemas.skill import Gate, Skill
from tests.unit.agents.judge.fixtures import NOTES, answer, disagreement, job


def request(skill: Skill, j: object, structured: bool = True, **kw: Any) -> Any:
    crit = skill.criteria[j.field_id]  # type: ignore[attr-defined]
    ctx = gather(j.answers, crit.keywords, NOTES, 5000)  # type: ignore[attr-defined]
    return build_request(skill, crit, j, ctx, structured=structured, max_tokens=800,  # type: ignore[arg-type]
                         **kw)


def test_cells_of_one_criterion_share_the_static_prefix(skill: Skill) -> None:
    a = request(skill, disagreement(patient="p001"), min_cache_tokens=1)
    b = request(skill, job("low_confidence", answer("default", "no_info", patient="p777",
                                                    confidence="low", reason="unclear")),
                min_cache_tokens=1)
    assert a.system == b.system and a.output_schema == b.output_schema  # type: ignore[attr-defined]
    assert all(block.cache for block in a.system)  # type: ignore[attr-defined]
    assert a.messages != b.messages  # type: ignore[attr-defined]


def test_patient_text_is_only_in_the_messages(skill: Skill) -> None:
    r = request(skill, disagreement())
    system = "".join(b.text for b in r.system)  # type: ignore[attr-defined]
    assert "p001" not in system and "metformin since 2016" not in system
    user = r.messages[0]["content"]  # type: ignore[attr-defined]
    assert "metformin since 2016" in user and "Agent A (agent_id default)" in user


def test_the_criterion_block_carries_the_schema_and_edge_cases(skill: Skill) -> None:
    r = request(skill, disagreement())
    crit = r.system[1].text  # type: ignore[attr-defined]
    assert '"enum": [true, false, "no_info"]' in crit
    assert "A relative's diagnosis is not the patient's diagnosis." in crit
    other = request(skill, disagreement(field_id="on_sglt2i"))
    assert other.system[0] == r.system[0] and other.system[1] != r.system[1]  # type: ignore[attr-defined]


def test_sentinel_mode_asks_for_sentinels_and_no_schema(skill: Skill) -> None:
    r = request(skill, disagreement(), structured=False)
    assert r.output_schema is None and "<JUDGE_ANALYSIS>" in r.system[0].text  # type: ignore[attr-defined]


@pytest.mark.parametrize(("sizes", "minimum", "marks"), [
    ([7000, 100], 2048, [False, False]),      # 2,000 + 29 tokens: nothing caches
    ([7168, 700], 2048, [True, True]),        # the shared block alone clears the minimum
    ([3500, 3700], 2048, [False, True]),      # only the cumulative prefix clears it
    ([14336, 350], 4096, [True, True]),       # Haiku 4.5 / Opus 4.5 minimum
    ([1, 1, 1, 1, 1, 1], 1, [True] * 4 + [False] * 2),  # never more than 4 breakpoints
])
def test_breakpoints_sit_only_where_the_prefix_caches(sizes: list[int], minimum: int,
                                                      marks: list[bool]) -> None:
    assert cache_marks(["x" * n for n in sizes], minimum) == marks


def test_token_estimate_is_chars_over_3_5_rounded_up() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 7, 8, 3500)] == [0, 1, 2, 3, 1000]


def test_the_default_minimum_decides_the_breakpoints(skill: Skill) -> None:
    small = request(skill, disagreement())
    assert [b.cache for b in small.system] == [False, False]  # the tiny test skill
    big = request(skill, disagreement(), min_cache_tokens=estimate_tokens(
        small.system[0].text))
    assert [b.cache for b in big.system] == [True, True]


def test_the_shared_block_carries_the_skill_description_and_every_criterion(
        skill: Skill) -> None:
    shared = request(skill, disagreement()).system[0].text
    assert "# Test phenotype" in shared  # SKILL.md
    assert all(f"### {f}" in shared for f in skill.criteria)
    assert "A relative's diagnosis is not the patient's diagnosis." in shared


def test_every_agent_the_gate_answer_and_the_other_notes_are_given(skill: Skill) -> None:
    j = job("disagreement", answer("default", True), answer("skeptical", False),
            answer("third", "no_info"))
    crit = skill.criteria["t2dm_dx"].model_copy(update={"gate": None})
    ctx = gather(j.answers, crit.keywords, {"n01": NOTES["n01"]}, 5000)
    r = build_request(skill, crit, j, ctx, structured=True, max_tokens=800, notes=NOTES)
    user = r.messages[0]["content"]
    assert all(f"## Agent {x} (agent_id {a})" in user
               for x, a in (("A", "default"), ("B", "skeptical"), ("C", "third")))
    others = user.split("Other notes of this patient, not shown: ")[1]
    assert f"n03 ({len(NOTES['n03'])} characters)" in others and "n01" not in others
    assert "Gate criterion" not in user
    gated = skill.criteria["on_sglt2i"].model_copy(update={"gate": Gate(field_id="t2dm_dx",
                                                                      value=True)})
    for given, says in ((True, "the patient's answer is true"),
                        (None, "the patient's answer is null")):
        r = build_request(skill, gated, j, ctx, structured=True, max_tokens=800,
                          gate_answer=given)
        assert says in r.messages[0]["content"]
    r = build_request(skill, gated, j, ctx, structured=True, max_tokens=800)
    assert "the patient's answer is not known to the judge" in r.messages[0]["content"]
