"""``judgeflow replay judge|debrief``: re-judge an input topic under the current prompt version."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from agents.replay.plan import parse_offsets, parse_since
from agents.settings import Settings
from streams import event_loop
from streams.argtypes import positive_float
from streams.errors import StreamsError
from streams.exit_codes import CommandError, ExitCode
from streams.kafka_access import KafkaAccessError

_DESC = ("Re-read {topic} and publish a new result series under the CURRENT prompt version "
         "(the version follows the prompt, skill, model and its parameters; see docs/replay.md, "
         "'Changing the prompt'). Runs as its own consumer group named after the version: a "
         "killed run resumes where it stopped, and nothing this version already published is "
         "paid for again. Each new result names the one it supersedes.")


def _arg(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse(text)
        except StreamsError as exc:  # argparse prints a one-line usage error
            raise argparse.ArgumentTypeError(str(exc)) from None
    return convert


def add_kinds(kinds: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for worker, topic in (("judge", "the judge jobs topic"),
                          ("debrief", "the debrief requests topic")):
        p = kinds.add_parser(worker, help=f"re-{worker} {topic} under the current prompt",
                             description=_DESC.format(topic=topic))
        start = p.add_mutually_exclusive_group()
        # DESIGN's spelling of the default (the whole topic), kept so its commands work
        start.add_argument("--from-beginning", action="store_true",
                           help="the whole topic (the default)")
        start.add_argument("--since", metavar="TIME", type=_arg(parse_since),
                           help="only records written at or after TIME (ISO 8601; UTC if no "
                           "zone); first run of a version only")
        start.add_argument("--from-offsets", metavar="P:O,...", type=_arg(parse_offsets),
                           help="start at these offsets (partitions not listed are skipped); "
                           "first run of a version only")
        if worker == "judge":
            p.add_argument("--task", help="only jobs of this task_id")
            p.add_argument("--criterion", metavar="FIELD_ID", help="only this criterion")
            p.add_argument("--kind", choices=("disagreement", "low_confidence", "type_drift"),
                           help="only jobs of this kind")
        p.add_argument("--dry-run", action="store_true",
                       help="print jobs, estimated input/output tokens and USD, then exit")
        p.add_argument("--budget-usd", type=positive_float, metavar="X",
                       help="stop cleanly (committing what is done) before a call would "
                       "take the spend past X")
        p.add_argument("--batch", action="store_true",
                       help="send the first calls through the Message Batches API (half "
                       "price, results within 24 h); resumable after a kill")
        p.add_argument("--poll-seconds", type=positive_float, default=5.0, metavar="S",
                       help="first batch polling interval; doubles up to 60 s (default 5)")
        p.set_defaults(func=run, worker=worker)


def counting_line(e: Any, total: int) -> None:
    """The dry run's progress on a terminal (counting tokens can take a while)."""
    sys.stderr.write(f"\rdry run: read {e.read}/{total} record(s), priced {e.calls} "
                     "call(s)   ")
    sys.stderr.flush()


def dry_run_report(head: str, out: Any, filters: Any) -> str:
    e = out.estimate
    used = " ".join(f"--{k} {v}" for k, v in filters.as_dict().items() if v is not None)
    lines = [head + (f"; {e.read - e.filtered} after {used}" if used else ""),
             f"  already published under this version: {e.already}"]
    if out.provider == "offline":
        lines += [f"  to judge: {e.jobs} job(s)",
                  "  offline provider: no model calls, $0 (set llm.provider and llm.model "
                  "to price a model)"]
        return "\n".join(lines)
    from agents.replay.estimate import TOOL_TURNS  # the pricing model: only when it prints

    routed = [m for m in e.by_model if m != out.model]
    per_call = e.output_tokens // max(1, e.calls)
    lines += [f"  priced for provider {out.provider}, model {out.model}"
              + (f"; routed by llm.criterion_models: {', '.join(routed)}" if routed else ""),
              f"  to judge: {e.jobs} job(s), {e.calls} model call(s)"
              + (f" ({e.tool_turns} of them chart-tool turns, a guess of "
                 f"{TOOL_TURNS} per job offered the tools; at most "
                 f"JUDGEFLOW_CHART_TOOLS__MAX_CALLS + 1)" if e.tool_turns else ""),
              f"  input tokens: {e.input_tokens} (+ cache write {e.cache_write_tokens}, "
              f"cache read {e.cache_read_tokens}; counted by {e.counted})",
              f"  output tokens: {e.output_tokens}, an estimate ({per_call} per call: "
              f"{e.output_source}; billed as generated, at most max_tokens "
              f"{e.max_tokens} per call)",
              f"  estimated cost: ${e.usd:.4f}" + (" at batch prices" if out.batch else "")]
    if routed:  # each job priced at its own model (Haiku 5.5 by its prompt-length tier)
        lines += [f"    {m}: {c.calls} call(s), input {c.input_tokens} (+ cache write "
                  f"{c.cache_write_tokens}, read {c.cache_read_tokens}), output "
                  f"{c.output_tokens}: ${c.usd:.4f}" for m, c in e.by_model.items()]
    if out.batch:
        lines += ["  --batch: all usage of each first call (cache writes and reads "
                  "included) at the model's batch discount;",
                  "  repair round-trips are live calls at full price and, like retries, not "
                  "in this estimate: the real figure is not exactly half the live one"]
    return "\n".join(lines)


def stop_line(t: Any, budget: float) -> str:
    """Why ``--budget-usd`` stopped the run, reservations for calls in flight included."""
    why = (f"the next call could pass the budget (${budget:g}): ${t.reserved_usd:.4f} was "
           f"reserved for {t.in_flight} call(s) in flight" if t.in_flight else
           f"the next call would pass the budget (${budget:g})")
    return f"\n  STOPPED: {why}; run again with a larger budget to continue"


def run(args: argparse.Namespace, settings: Settings) -> int:
    # imported when the command runs: the judge, debrief and their LLM seam take ~1 s that
    # every other command of the CLI would pay
    from agents.errors import AgentsError
    from agents.replay.console import Console, replay_console
    from agents.replay.run import Options, progress_line, replay
    from agents.replay.targets import Filters

    opts = Options(worker=args.worker, since=args.since, from_offsets=args.from_offsets,
                   # judge only: for debrief ``args.kind`` is the subcommand's name ("debrief")
                   filters=Filters(args.task, args.criterion, args.kind)
                   if args.worker == "judge" else Filters(),
                   dry_run=args.dry_run, budget_usd=args.budget_usd,
                   batch=args.batch, poll_seconds=args.poll_seconds)
    tty = sys.stderr.isatty()
    console = Console()
    try:
        with replay_console(console):
            out = event_loop.run(replay(
                settings, opts, progress=console.wrap(progress_line) if tty else None,
                counting=console.wrap(counting_line) if tty else None))
    except KafkaAccessError:  # an ACL or a login: exit 1, as a worker refused would
        raise
    except (AgentsError, StreamsError) as exc:  # a model, a range, a topic: fix and rerun
        raise CommandError(str(exc)) from None
    finally:
        console.end()
    head = (f"replay {args.worker} under {out.version} (group {out.plan.group}"
            f"{', resumed' if out.plan.resumed else ''}): {out.plan.total} record(s) in range")
    if out.estimate is not None:
        print(dry_run_report(head, out, opts.filters))
        return ExitCode.OK
    assert out.tally is not None
    text, code = result_report(head, out.tally, args.budget_usd)
    print(text)
    return code


def result_report(head: str, t: Any, budget: float | None) -> tuple[str, ExitCode]:
    """The run's summary and exit status: 3 when the budget stopped it, 1 when a --batch
    run left jobs without an answer (never "0 new results", exit 0, with work left)."""
    text = (f"{head}\n  new results {t.judged}, already published {t.already}, filtered out "
            f"{t.filtered}, malformed {t.malformed}, dead-lettered {t.failed}; "
            f"spent ${t.usd:.4f}")
    if t.stopped_by == "budget":
        return text + stop_line(t, budget or 0.0), ExitCode.BUDGET_REACHED
    if t.stopped_by == "unanswered":
        return text + (f"\n  NOT DONE: {t.deferred} job(s) got no batch answer (errored or "
                       "expired every round); run the same command again to re-submit "
                       "them"), ExitCode.FAILURE
    return text, ExitCode.OK
