"""Per-criterion judge models: ``llm.criterion_models`` -> one route (settings, provider,
prompt version) per overridden criterion, so an operator can move a criterion to a cheaper
model where the evidence (``judgeflow compare``) says agreement holds.

:func:`check_overrides` is pure: every override must name a criterion of the skill and a
model of the catalogue (its effort is checked by the Models API at start) — each mistake is
one line. The
prompt version of an overridden criterion is computed with its own model and effort, so its
results form their own series (and ``compare`` shows them side by side).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from agents.errors import AgentsError
from agents.providers import catalogue
from agents.providers.base import Provider
from agents.providers.factory import release, require_credentials
from agents.providers.startup import Origin, check_provider
from agents.settings import Settings
from schemas.skill import Skill
from streams.metrics import Metrics


@dataclass(frozen=True)
class Route:
    settings: Settings
    provider: Provider


def override_settings(settings: Settings, field_id: str) -> Settings:
    """``settings`` with the criterion's model/effort in place (unchanged without one)."""
    o = settings.llm.criterion_models.get(field_id)
    if o is None:
        return settings
    update = {k: v for k, v in (("model", o.model), ("effort", o.effort)) if v is not None}
    return settings.model_copy(update={"llm": settings.llm.model_copy(update=update)})


def check_overrides(settings: Settings, skill: Skill) -> None:
    """One-line :class:`AgentsError` for an override naming an unknown criterion or model
    (``llm.criterion_models``, ``chart_tools.criteria``), or a charts folder that is not
    one. The effort is checked against the Models API when the route's provider starts
    (:func:`agents.providers.startup.check_model`), like the default model's."""
    charts = settings.charts_dir
    if not charts.is_dir():  # else every patient has no notes: fallbacks, never an error
        what = "is not a folder" if charts.exists() else "does not exist"
        raise AgentsError(f"charts folder {charts} {what} (JUDGEFLOW_CHARTS_DIR): the judge "
                          "would see no patient notes")
    unknown = sorted(set(settings.chart_tools.criteria) - set(skill.criteria))
    if unknown:
        raise AgentsError(f"chart_tools.criteria[{unknown[0]!r}] (JUDGEFLOW_CHART_TOOLS__"
                          f"CRITERIA): no such criterion in the skill; criteria: "
                          f"{', '.join(sorted(skill.criteria))}")
    cat = catalogue.load(settings.llm.models_file)
    for field_id in sorted(settings.llm.criterion_models):
        where = f"llm.criterion_models[{field_id!r}]"
        if field_id not in skill.criteria:
            raise AgentsError(f"{where}: no such criterion in the skill; criteria: "
                              f"{', '.join(sorted(skill.criteria))}")
        llm = override_settings(settings, field_id).llm
        if llm.provider == "local":
            continue  # a local server's models are declared, not catalogued
        entry = cat.find(llm.model)
        if entry is None:
            raise AgentsError(f"{where}: model {llm.model!r} is not in the model catalogue; "
                              f"known: {', '.join(sorted(cat.entries))}")


def build_routes(settings: Settings, skill: Skill,
                 make: Callable[[Settings], Provider]) -> dict[str, Route]:
    """A route per overridden criterion whose model or effort differs from the default."""
    check_overrides(settings, skill)
    routes: dict[str, Route] = {}
    by_llm: dict[tuple[str, str | None], Provider] = {}
    for field_id in sorted(settings.llm.criterion_models):
        s = override_settings(settings, field_id)
        if (s.llm.model, s.llm.effort) == (settings.llm.model, settings.llm.effort):
            continue
        key = (s.llm.model, s.llm.effort)
        if key not in by_llm:  # criteria on the same model share one provider (and budget)
            by_llm[key] = make(s)
        routes[field_id] = Route(s, by_llm[key])
    return routes


def origin(settings: Settings, routes: dict[str, Route], provider: Provider) -> Origin:
    """Which settings chose ``provider``'s model and effort: the overrides of the criteria it
    judges that set them (else llm.model / llm.effort, which they inherit)."""
    fields = [f for f, r in sorted(routes.items()) if r.provider is provider]
    overrides = settings.llm.criterion_models

    def where(attr: str) -> str | None:
        named = [f for f in fields if getattr(overrides[f], attr) is not None]
        if not named:
            return None
        return "JUDGEFLOW_LLM__CRITERION_MODELS" + "".join(f'["{f}"]' for f in named[:1]) + \
            f".{attr}" + (f" (and {len(named) - 1} more)" if len(named) > 1 else "")

    return Origin(model=where("model") or Origin.model, effort=where("effort") or Origin.effort)


async def check_routes(settings: Settings, routes: dict[str, Route],
                       metrics: Metrics | None,
                       stack: contextlib.AsyncExitStack) -> list[Route]:
    """The worker's start-up checks (credentials, the Models API: unknown or retired model,
    effort) for each distinct per-criterion provider, errors naming the override they came
    from; every provider is closed with ``stack``, also those left unchecked when one check
    fails. The judge worker and a replay both start routes here. Returns the distinct routes."""
    distinct = list({id(r.provider): r for r in routes.values()}.values())
    for route in distinct:
        stack.push_async_callback(release, route.provider)
    for route in distinct:
        require_credentials(route.provider)
        await check_provider(route.provider, route.settings.llm, metrics,
                             origin=origin(settings, routes, route.provider))
    return distinct
