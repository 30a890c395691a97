"""Prompt versions, one function for every LLM worker (judge, debrief).

A version reads ``<label>+<hash>``, e.g. ``judge-v3+4f0c9a1be27d``:

* the **label** is a constant bumped by hand when the prompt is changed on purpose
  (``agents.judge.versioning.LABEL``, ``agents.debrief.prompt.LABEL``), so people can talk
  about "judge-v3" in a review;
* the **hash** covers every input that shapes the output, so a change nobody bumped the
  label for (a skill file edited, another model, a larger token budget) still starts a new
  series: the system and user templates, the output schema, the validation rules, the model
  id and its parameters (max_tokens, effort, structured output, ...), and the skill text
  actually sent (never files the prompt does not contain).

``result_id = sha256(input id | version)``: the same input judged again under the same
version gets the same id (and is skipped, not paid for twice); any change gives a new one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemas.ids import canonical_json, derive_id

HASH_CHARS = 12


def source(module: object) -> str:
    """A module's source text (what code-side templates and rules hash as)."""
    path = getattr(module, "__file__", None)
    return Path(path).read_text(encoding="utf-8") if path else ""


@dataclass(frozen=True)
class VersionInputs:
    """Everything that shapes a worker's output. Each field is JSON-serialisable."""

    label: str
    #: system and user templates: prompt texts, or the source of the code that renders them
    templates: Mapping[str, str]
    #: the JSON schema the answer must follow (tool input schema / structured output)
    output_schema: Any
    #: the source of the validation code (or a rules-version string)
    rules: Mapping[str, str]
    provider: str
    model: str
    #: max_tokens, effort, structured_output, budgets ... (anything sent with the request)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    #: the skill text as sent to the model, by part name (empty for workers without one)
    skill: Mapping[str, str] = field(default_factory=dict)


def prompt_version(inputs: VersionInputs) -> str:
    parts = {"templates": dict(inputs.templates), "output_schema": inputs.output_schema,
             "rules": dict(inputs.rules), "provider": inputs.provider, "model": inputs.model,
             "parameters": dict(inputs.parameters), "skill": dict(inputs.skill)}
    return f"{inputs.label}+{derive_id(canonical_json(parts), length=HASH_CHARS)}"


def result_id(input_id: str, version: str) -> str:
    return derive_id(input_id, version, sep="|")

