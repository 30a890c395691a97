"""The judge's prompt versions (built by :func:`agents.versioning.prompt_version`).

``LABEL`` is bumped by hand when the judge prompt is changed on purpose. The hash covers
the prompt and case-message code, the data framing, the validation rules, the rules text,
the output schema, the skill text the prompt actually contains (the shared skill block and
every usable criterion's block — not README or unusable files), the provider, model and
parameters (max_tokens, effort, structured output, context budget) and, for the offline
provider, the heuristic's code.

Type-drift cells are decided in code, not by the model: their version
(``TYPEDRIFT_LABEL+hash``) covers only the type-drift code and the criterion's answer
schema, so a prompt change does not give them a new id.
"""

from __future__ import annotations

from agents import framing
from agents.judge import (
    case,
    chart_tools,
    gates,
    offline,
    output_schema,
    prompt,
    quotes,
    read_checks,
    rules,
    tool_loop,
    typedrift,
    validate,
)
from agents.settings import Settings
from agents.versioning import VersionInputs, source
from agents.versioning import prompt_version as _version
from agents.versioning import result_id as result_id
from schemas.skill import Criterion, Skill
from streams.detect import normalize

#: Bump when the judge prompt changes on purpose (docs/replay.md, "Changing the prompt").
LABEL = "judge-v3"
#: Bump when the type-drift rules change on purpose.
TYPEDRIFT_LABEL = "typedrift-v1"


def prompt_version(settings: Settings, skill: Skill, provider: str, model: str) -> str:
    llm = settings.llm
    structured = llm.structured_output
    tools = settings.chart_tools
    # the chart tools change the conversation, so they are part of the version; with every
    # criterion off (the default) the version is what it was before the tools existed
    used = tools.mode != "off" or any(m != "off" for m in tools.criteria.values())
    tool_code = {"tool_loop": source(tool_loop), "chart_tools": source(chart_tools),
                 "read_checks": source(read_checks)} if used else {}
    sent = {"shared": prompt.skill_text(skill)} | {
        f"criterion:{fid}": prompt.criterion_text(skill, c) for fid, c in skill.criteria.items()}
    return _version(VersionInputs(
        label=LABEL,
        templates={"prompt": source(prompt), "case": source(case), "framing": source(framing),
                   "gates": source(gates),
                   "rules_text": prompt.rules_text(structured)},
        output_schema=output_schema.judge_output_schema() if structured else "sentinel",
        rules={"rules": source(rules), "validate": source(validate), "quotes": source(quotes),
               "schema_code": source(output_schema),
               "offline": source(offline) if provider == "offline" else ""} | tool_code,
        provider=provider, model=model,
        parameters={"max_tokens": llm.max_tokens, "effort": llm.effort,
                    "structured_output": structured,
                    "context_budget_chars": llm.context_budget_chars}
        | ({"chart_tools": tools.model_dump(mode="json")} if used else {}),
        skill=sent))


def typedrift_version(criterion: Criterion) -> str:
    return _version(VersionInputs(
        label=TYPEDRIFT_LABEL, templates={},
        output_schema=criterion.answer_schema.model_dump(mode="json"),
        rules={"typedrift": source(typedrift), "normalize": source(normalize)},
        provider="code", model="answer-schema"))
