"""The phenotype skill: its model (:mod:`schemas.skill.model`), the loader of a skill folder
(:mod:`schemas.skill.load`) and other teams' spellings (:mod:`schemas.skill.foreign`).

Callers import from here (``from schemas.skill import Skill, load_skill``).
"""

from schemas.skill.load import load_criterion, load_skill, read_skill
from schemas.skill.model import (
    CRITERIA_DIRS,
    CRITERION_SUFFIXES,
    EDGE_DIRS,
    NO_INFO,
    AnswerSchema,
    Criterion,
    Gate,
    Skill,
    SkillError,
    Uses,
    safe_child,
)

__all__ = ["CRITERIA_DIRS", "CRITERION_SUFFIXES", "EDGE_DIRS", "NO_INFO", "AnswerSchema",
           "Criterion", "Gate", "Skill", "SkillError", "Uses", "load_criterion", "load_skill",
           "read_skill", "safe_child"]
