"""``judgeflow llm check``: the live smoke test to run after changing the model or the key.

With ``ANTHROPIC_API_KEY`` set: checks the model (catalogue + Models API, like a worker at
start), then sends one real request per worker kind (judge: one sample cell; debrief: one
sample encounter) and prints model, latency, tokens, cache hit and cost, plus whether each
cacheable prefix clears the model's minimum. Without a key it says so and exits 0 only when
nothing asked for a provider (the offline provider is configured and no ``--provider``);
a provider asked for by ``--provider`` or ``JUDGEFLOW_LLM__PROVIDER`` that cannot be checked
(no key, no credentials) is an error: one ``judgeflow:`` line on stderr, exit 2, as every
worker would refuse to start.
``--provider bedrock|vertex`` (or ``JUDGEFLOW_LLM__PROVIDER``) does the same through Amazon
Bedrock (InvokeModel or, for the 5.x models, the bedrock-mantle Messages API: the platform
data says which) or Google Vertex AI with their credential chains, and says what the
endpoint lacks. ``--provider local`` (or ``JUDGEFLOW_LLM__PROVIDER=local``) does it against
the Anthropic-compatible server at ``JUDGEFLOW_LLM__BASE_URL`` (vLLM, Ollama, llama.cpp:
``JUDGEFLOW_LLM__SERVER``) with the declared model, no Claude key, priced at zero (or the
models file's prices), and says what the server lacks.
Exit status: 0 all calls answered, 1 a call failed, 2 the model cannot be used.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from typing import Any

from agents.settings import Settings
from streams import event_loop
from streams.argtypes import positive_int
from streams.exit_codes import CommandError, ExitCode

KINDS = ("judge", "debrief")
CLOUDS = ("anthropic", "bedrock", "vertex")
#: every provider ``llm check`` can check (local: a server inside the hospital)
PROVIDERS = (*CLOUDS, "local")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("llm", help="LLM provider tools (check)",
                       description="Tools for the LLM provider.")
    lsub = p.add_subparsers(dest="llm", metavar="ACTION", required=True)
    c = lsub.add_parser("check", help="one real call per worker kind: model, latency, tokens, "
                        "cache, cost",
                        description="Check the configured model and send one real request per "
                        "worker kind (costs a few cents). Needs ANTHROPIC_API_KEY; "
                        "ANTHROPIC_BASE_URL is honoured. --provider bedrock/vertex uses the AWS "
                        "or Google credential chain (ANTHROPIC_BEDROCK_BASE_URL, "
                        "ANTHROPIC_BEDROCK_MANTLE_BASE_URL, ANTHROPIC_VERTEX_BASE_URL "
                        "honoured).")
    c.add_argument("--model", help="check this model instead of JUDGEFLOW_LLM__MODEL")
    c.add_argument("--provider", choices=PROVIDERS, default=None,
                   help="anthropic (the Claude API), bedrock, vertex or local (an "
                   "Anthropic-compatible server at JUDGEFLOW_LLM__BASE_URL) (default: "
                   "JUDGEFLOW_LLM__PROVIDER when it names one of these, else anthropic)")
    c.add_argument("--worker", choices=KINDS, action="append",
                   help="only this worker kind (repeatable; default: both)")
    c.add_argument("--calls", type=positive_int, default=1,
                   help="requests per worker kind; the 2nd and later show cache reads")
    c.set_defaults(func=run_check)


def run_check(args: argparse.Namespace, settings: Settings) -> int:
    configured = settings.llm.provider
    provider = args.provider or (configured if configured in PROVIDERS else "anthropic")
    if provider == "anthropic" and not os.environ.get("ANTHROPIC_API_KEY"):
        if args.provider:  # asked for explicitly: it cannot be checked
            raise CommandError("llm check: --provider anthropic but ANTHROPIC_API_KEY is not "
                               "set; set it to send one real request per worker kind")
        if configured != "offline":  # every worker would refuse to start
            raise CommandError(f"llm check: llm.provider is {configured} but "
                               "ANTHROPIC_API_KEY is not set; set it, or set "
                               "JUDGEFLOW_LLM__PROVIDER=offline")
        print("llm check: ANTHROPIC_API_KEY is not set; nothing to check with the offline "
              "provider (set it to send one real request per worker kind)")
        return ExitCode.OK
    update: dict[str, Any] = {"provider": provider, "check_cache_prefixes": False}
    if args.model:
        update["model"] = args.model
    s = settings.model_copy(update={"llm": settings.llm.model_copy(update=update)})
    return event_loop.run(_check(s, tuple(args.worker or KINDS), max(1, args.calls)))


def samples(settings: Settings, kinds: tuple[str, ...],
            structured: bool = False) -> Iterator[tuple[str, Any]]:
    """One sample request per worker kind, built the way the workers build them (the
    debrief on the structured-outputs path when the Models API lists them for the model,
    as :meth:`agents.debrief.grader.DebriefGrader.first_request` does: its cached prefix is then
    the rules alone, without the tool schema)."""
    if "judge" in kinds:
        from agents.judge.sample_request import sample_request

        judged, origin = sample_request(settings)
        if origin.packaged:
            print("  judge: the request is the packaged sample's (no answers.jsonl beside "
                  f"{settings.skill_dir}): its prefix is not your rubric's")
        yield "judge", judged
    if "debrief" in kinds:
        from agents.debrief.autorubric import rubric_for
        from agents.debrief.prompt import build_request
        from agents.debrief.sampledata import load_requests

        request = load_requests()[0]
        rubric, source = rubric_for(request)
        yield "debrief", build_request(request, rubric, source, settings.llm.max_tokens,
                                       structured=structured)


async def _check(settings: Settings, kinds: tuple[str, ...], calls: int) -> int:
    from agents.errors import AgentsError
    from agents.providers.factory import make_provider, release

    try:
        provider: Any = make_provider(settings)
    except AgentsError as exc:  # the one error map prints it (cli.errors): exit 2
        raise CommandError(f"llm check: {exc}") from exc
    try:  # the provider's client is closed on every exit, as the workers close theirs
        return await _checked(provider, settings, kinds, calls)
    finally:
        await release(provider)


async def _checked(provider: Any, settings: Settings, kinds: tuple[str, ...],
                   calls: int) -> int:
    from agents.errors import AgentsError, LLMError
    from agents.providers.factory import cost_usd
    from agents.providers.startup import check_model, report_cache_prefixes

    try:
        if getattr(provider, "has_credentials", True) is False:
            # asked for (--provider or llm.provider): every worker would refuse to start
            raise CommandError(
                f"llm check: no {provider.name} credentials found "
                f"({getattr(provider, 'credentials_hint', 'ANTHROPIC_API_KEY')}); nothing "
                "to check")
        await check_model(provider, settings.llm)
    except AgentsError as exc:
        raise CommandError(f"llm check: {exc}") from exc
    entry, facts = provider.entry, getattr(provider, "facts", None)
    head = f"llm check: {provider.name} model {provider.model}{_platform_line(provider)}"
    if facts is None:
        why = "" if provider.name in CLOUDS[1:] else "; the Models API did not answer"
        print(f"{head} (cache minimum {entry.min_cache_tokens} tokens{why}, effort "
              f"{settings.llm.effort or 'the model default'})")
    else:
        print(f"{head} ({facts.lifecycle}; cache minimum "
              f"{entry.min_cache_tokens} tokens, adaptive thinking "
              f"{'yes' if facts.adaptive_thinking else 'no'}, structured outputs "
              f"{'yes' if facts.structured_outputs else 'no'}, batch "
              f"{'yes' if facts.batch else 'no'}, efforts {', '.join(facts.efforts) or 'none'}"
              f", effort {_effort(settings.llm.effort, facts.efforts)})")
    for line in _lacks(provider):
        print(f"  {provider.name}: {line}")
    status = ExitCode.OK
    for kind, request in samples(settings, kinds,
                                 structured=bool(facts and facts.structured_outputs)):
        caching = getattr(getattr(provider, "server", None), "prompt_caching", True)
        for report in await report_cache_prefixes(provider, request, label=kind,
                                                log_lines=False) if caching else ():
            print(f"  {kind}: cache breakpoint {report.breakpoint}: {report.tokens} tokens "
                  f"{'>=' if report.caches else '<'} {report.minimum}: "
                  f"{'caches' if report.caches else 'NOT cached'}")
        if caching and provider.entry is not None and not any(
                b.cache for b in request.system):  # the builder left it out: it would not
            print(f"  {kind}: no cache breakpoint sent: the prefix is under "
                  f"{provider.model}'s minimum of {provider.entry.min_cache_tokens} tokens")
        for n in range(calls):
            try:
                r = await provider.complete(request)
            except LLMError as exc:
                print(f"  {kind}: call {n + 1} FAILED: {exc.kind}: {exc.message}")
                status = ExitCode.FAILURE
                break
            u = r.usage
            print(f"  {kind}: call {n + 1}: model {r.model}, {r.latency_ms} ms, "
                  f"stop {r.stop_reason}, tokens in {u.input_tokens} out "
                  f"{u.output_tokens} cache read {u.cache_read_input_tokens} write "
                  f"{u.cache_creation_input_tokens}, cache hit "
                  f"{'yes' if u.cache_read_input_tokens else 'no'}, "
                  f"cost ${cost_usd(u, r.model, settings.llm):.6f}")
        seen = provider.cache_log.reasons
        if seen:
            print(f"  {kind}: cache diagnostics: {', '.join(seen)}")
            seen.clear()
    return status


def _effort(effort: str | None, offered: tuple[str, ...]) -> str:
    """The effort the calls carry: none to a model that lists none (a declared local model;
    a catalogued one that lacks it refuses to start instead)."""
    if effort and not offered:
        return f"{effort} not sent (the model lists no efforts)"
    return effort or "the model default"


def _platform_line(provider: Any) -> str:
    if getattr(provider, "declared", False):
        return f" (declared) on {provider.server.name} at {provider.base_url}"
    m = getattr(provider, "platform_model", None)
    return "" if m is None else f" as {m.id} ({m.lifecycle} on {provider.name})"


def _lacks(provider: Any) -> list[str]:
    """What the model's platform endpoint does not offer, and what judgeflow does instead."""
    endpoint = getattr(provider, "endpoint", None)
    if endpoint is None:
        return []
    out = [f"endpoint: {endpoint.name}"]
    if not endpoint.batches:
        out.append("no Message Batches API: `replay --batch` runs live calls (no discount)")
    if not endpoint.count_tokens:
        out.append("no token counting: cache prefix sizes below are local estimates")
    if getattr(provider, "declared", False):
        server = provider.server
        out.append("no Models API: the model is declared by JUDGEFLOW_LLM__MODEL")
        if not server.prompt_caching:
            out.append("no prompt caching: no cache_control is sent")
        if not server.structured_outputs:
            out.append("no structured outputs: answers are validated and repaired in code")
        return out
    if not endpoint.models_api:
        out.append("no Models API: the model's lifecycle comes from judgeflow's platform data")
    return out
