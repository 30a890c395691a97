"""One prompt-versioning function for judge and debrief: a readable label plus a hash of
every input that shapes the output, and nothing else (files never sent do not count; type
drift, settled in code, ignores the prompt and the model)."""

from __future__ import annotations

from pathlib import Path

from agents.debrief.versioning import debrief_version
from agents.judge.versioning import LABEL, TYPEDRIFT_LABEL, prompt_version, typedrift_version
from agents.settings import Settings
from agents.versioning import result_id
from schemas.skill import load_skill
from tests.helpers import label_of
from tests.unit.agents.judge.fixtures import write_skill

S = Settings()
MODEL = "claude-sonnet-5-5"


def _judge(skill_root: Path, settings: Settings = S, model: str = MODEL) -> str:
    return prompt_version(settings, load_skill(skill_root), "anthropic", model)


def _with_llm(**llm: object) -> Settings:
    return Settings(llm={**S.llm.model_dump(), **llm})


def test_judge_version_is_label_plus_hash_and_moves_with_what_shapes_the_answer(
        tmp_path: Path) -> None:
    root = write_skill(tmp_path)
    base = _judge(root)
    assert label_of(base) == LABEL and len(base) == len(LABEL) + 1 + 12
    assert _judge(root) == base  # deterministic
    changed = {
        "model": _judge(root, model="claude-opus-5"),
        "max_tokens": _judge(root, _with_llm(max_tokens=8000)),
        "effort": _judge(root, _with_llm(effort="high")),
        "structured": _judge(root, _with_llm(structured_output=False)),
    }
    crit = root / "references" / "criteria" / "t2dm_dx.md"
    crit.write_text(crit.read_text().replace("Definition of", "Revised definition of"))
    changed["criterion text"] = _judge(root)
    assert len({base, *changed.values()}) == 1 + len(changed), changed


def test_judge_version_ignores_skill_files_it_never_sends(tmp_path: Path) -> None:
    root = write_skill(tmp_path)
    base = _judge(root)
    broken = root / "references" / "criteria" / "broken.md"
    broken.write_text("---\nfield_id: broken\n---\nno prompt, no schema: unusable\n")
    skill = load_skill(root)
    assert "references/criteria/broken.md" in skill.files and "broken" not in skill.criteria
    assert _judge(root) == base


def test_debrief_version_names_the_model() -> None:
    a = debrief_version(S, "anthropic", "claude-sonnet-5-5")
    b = debrief_version(S, "anthropic", "claude-opus-5")
    assert a != b and label_of(a) == label_of(b) == "debrief-v2"
    assert result_id("req-1", a) != result_id("req-1", b)
    assert debrief_version(_with_llm(effort="low"), "anthropic", "claude-sonnet-5-5") != a
    assert label_of(debrief_version(S, "offline", "x")) == "debrief-offline"


def test_type_drift_version_ignores_prompt_and_model_but_not_the_schema(tmp_path: Path) -> None:
    root = write_skill(tmp_path)
    skill = load_skill(root)
    v = typedrift_version(skill.criteria["t2dm_dx"])
    assert label_of(v) == TYPEDRIFT_LABEL
    # the judge version moves with the model; the type-drift one cannot (it does not see it)
    assert _judge(root, model="claude-opus-5") != _judge(root)
    assert typedrift_version(load_skill(root).criteria["t2dm_dx"]) == v
    assert typedrift_version(skill.criteria["on_sglt2i"]) != v  # another answer schema
