"""The prompt keeps a byte-identical static prefix per criterion (prompt caching)."""

from __future__ import annotations

from agents.context.assemble import gather
from agents.judge.prompt import build_request
from schemas.skill import Skill
from tests.unit.agents.judge.fixtures import NOTES, answer, disagreement, job


def request(skill: Skill, j: object, structured: bool = True) -> object:
    crit = skill.criteria[j.field_id]  # type: ignore[attr-defined]
    ctx = gather(j.answers, crit.keywords, NOTES, 5000)  # type: ignore[attr-defined]
    return build_request(skill, crit, j, ctx, structured=structured, max_tokens=800)  # type: ignore[arg-type]


def test_cells_of_one_criterion_share_the_static_prefix(skill: Skill) -> None:
    a = request(skill, disagreement(patient="p001"))
    b = request(skill, job("low_confidence", answer("default", "no_info", patient="p777",
                                                    confidence="low", reason="unclear")))
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
