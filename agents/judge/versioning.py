"""``prompt_version``: a content hash of everything that shapes the judge's answer.

Hashed: the prompt and case-message code, the data framing, the validation rules, the rules
text, the output schema, every file of the phenotype skill (SKILL.md, criteria, edge
cases), the provider and model, the token and context budgets, and — for the offline
provider — the heuristic's code. Change any of them and
results form a new series; ``result_id = sha256(job_id | prompt_version)`` so a job judged
again under the same version gets the same id (and is not paid for twice).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson

from agents import framing
from agents.judge import case, offline, output_schema, prompt, rules, validate
from schemas.ids import derive_id
from schemas.skill import Skill
from streams.settings import Settings


def _source(module: object) -> str:
    path = getattr(module, "__file__", None)
    return Path(path).read_text(encoding="utf-8") if path else ""


def prompt_version(settings: Settings, skill: Skill, provider: str, model: str) -> str:
    structured = settings.llm.structured_output
    parts = {
        "prompt_code": _source(prompt),
        "case_code": _source(case),
        "framing_code": _source(framing),
        "rules_code": [_source(rules), _source(validate)],
        "rules": prompt.rules_text(structured),
        "output_schema": output_schema.judge_output_schema() if structured else "sentinel",
        "schema_code": _source(output_schema),
        "skill": sorted(skill.files.items()),
        "provider": provider,
        "model": model,
        "max_tokens": settings.llm.max_tokens,
        "context_budget_chars": settings.llm.context_budget_chars,
        "offline": _source(offline) if provider == "offline" else None,
    }
    digest = hashlib.sha256(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return f"pv-{digest[:16]}"


def result_id(job_id: str, version: str) -> str:
    return derive_id(job_id, version, sep="|")
