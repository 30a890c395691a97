"""The debrief's prompt versions (built by :func:`agents.versioning.prompt_version`).

Hashed: the system text and the user-message code (:mod:`agents.debrief.prompt`), the data
framing, the tool schema, the validation and scoring code, the auto-rubric, the provider,
model and parameters (max_tokens, repair budget, effort). Offline, the checklist grader's
code instead of the model. So two models never share an evaluation id.
"""

from __future__ import annotations

from agents import framing
from agents.debrief import autorubric, bands, offline, prompt, safety, scores, validate
from agents.settings import Settings
from agents.versioning import VersionInputs, prompt_version, source


def debrief_version(settings: Settings, provider: str, model: str) -> str:
    llm = settings.llm
    is_offline = provider == "offline"
    return prompt_version(VersionInputs(
        label="debrief-offline" if is_offline else prompt.LABEL,
        templates={"system": prompt.SYSTEM, "prompt": source(prompt),
                   "framing": source(framing), "autorubric": source(autorubric)},
        output_schema=prompt.TOOL,
        rules={"validate": source(validate), "scores": source(scores),
               "bands": source(bands), "safety": source(safety),
               "offline": source(offline) if is_offline else ""},
        provider=provider, model=offline.MODEL if is_offline else model,
        parameters={} if is_offline else {
            "max_tokens": max(llm.max_tokens, prompt.MIN_MAX_TOKENS),
            "repair_max_tokens": llm.repair_max_tokens, "effort": llm.effort}))
