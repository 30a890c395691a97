"""Where the sample judge request comes from: the answers beside the configured skill, else
the packaged sample; malformed lines and cells of unknown criteria are passed over."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agents.judge.sample_request import PACKAGED, answer_pairs, sample_request, source_of
from agents.settings import Settings
from streams.settings import SAMPLE_DIR


def settings_for(skill: Path, charts: Path) -> Settings:
    return Settings(skill_dir=skill, charts_dir=charts)


def test_the_packaged_sample_is_its_own_source() -> None:
    src = source_of(Settings())
    assert not src.packaged and src.answers == SAMPLE_DIR / "answers.jsonl"
    request, origin = sample_request(Settings())
    assert origin == src and request.messages


def test_a_skill_without_answers_beside_it_uses_the_packaged_sample(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE_DIR / "skill", tmp_path / "skill")
    s = settings_for(tmp_path / "skill", tmp_path / "charts")
    assert source_of(s) == PACKAGED
    _, origin = sample_request(s)
    assert origin.packaged and origin.charts_dir == SAMPLE_DIR / "charts"


@pytest.mark.parametrize("junk", [b"", b"not json", b'{"task_id": 1}'])
def test_malformed_lines_are_passed_over(tmp_path: Path, junk: bytes) -> None:
    lines = (SAMPLE_DIR / "answers.jsonl").read_bytes().splitlines()
    (tmp_path / "answers.jsonl").write_bytes(b"\n".join([junk, *lines, junk]))
    assert answer_pairs(tmp_path / "answers.jsonl") == answer_pairs(SAMPLE_DIR / "answers.jsonl")


def test_a_sample_whose_cells_the_skill_lacks_falls_back(tmp_path: Path) -> None:
    """Answers beside the skill, but of criteria it does not define: no usable pair there."""
    shutil.copytree(SAMPLE_DIR / "skill", tmp_path / "skill")
    line = (SAMPLE_DIR / "answers.jsonl").read_bytes().splitlines()[0]
    other = line.replace(b'"field_id":"', b'"field_id":"zz_')
    (tmp_path / "answers.jsonl").write_bytes(b"\n".join([other, other]))
    s = settings_for(tmp_path / "skill", tmp_path / "charts")
    assert not source_of(s).packaged
    _, origin = sample_request(s)
    assert origin.packaged
