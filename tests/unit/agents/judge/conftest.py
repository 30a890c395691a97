from __future__ import annotations

from pathlib import Path

import pytest

from agents.context.charts import ChartStore
from schemas.skill import Skill, load_skill
from tests.unit.agents.judge.fixtures import write_charts, write_skill


@pytest.fixture()
def skill(tmp_path: Path) -> Skill:
    return load_skill(write_skill(tmp_path))


@pytest.fixture()
def store(tmp_path: Path) -> ChartStore:
    return ChartStore(write_charts(tmp_path))
