"""``judgeflow compare OLD NEW``: two prompt versions side by side against the adjudications."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import Any

import orjson

from streams import event_loop
from streams.exit_codes import CommandError, ExitCode
from streams.settings import Settings
from streams.topics import read_to_end


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "compare", help="models and prompt versions side by side against the human "
        "adjudications",
        description="Reads the judge results and jobs, the adjudications and the cell outcomes to "
        "their current end (commits nothing). Without versions: every criterion by model "
        "and prompt version, with Cohen's kappa and Gwet's AC1 of the classification hint vs "
        "the reviewers' classification, answer accuracy (95% intervals), fallbacks and cost "
        "per 1,000 judged cells, then per criterion whether a cheaper model may take it: "
        "only when it is not worse by more than review.margin at 95% on at least "
        "review.min_cells paired adjudicated cells (else 'not enough cells'; the evidence "
        "for llm.criterion_models). With OLD NEW: per criterion, OLD -> "
        "NEW: adjudicated cells, accuracy, kappa, changed suggestions, fallbacks and cost "
        "per judged cell. Exit status 1 if there are no results to show.")
    p.add_argument("old", metavar="OLD_VERSION", nargs="?",
                   help="prompt_version of the baseline series (or an unambiguous prefix)")
    p.add_argument("new", metavar="NEW_VERSION", nargs="?",
                   help="prompt_version of the candidate series (or an unambiguous prefix)")
    p.add_argument("--criterion", metavar="FIELD_ID",
                   help="without versions: only this criterion")
    p.add_argument("--json", action="store_true", help="print one JSON object instead")
    p.set_defaults(func=run)


async def gather(settings: Settings) -> Any:
    from agents.calibrate.core import Calibration
    from agents.calibrate.feed import Feeder
    from agents.calibrate.run import answer_schemas
    from streams.errors import BadRecord

    cal = Calibration(answer_schemas(settings) or {})
    feeder = Feeder(cal, settings.topics)
    bad = 0
    t = settings.topics
    adjudications = []  # fed last: their tasks are known once every result was read
    async for rec in read_to_end(settings.kafka,
                                 [t.judge_results, t.adjudications, t.cell_outcomes,
                                  t.judge_jobs]):
        if rec.topic == t.adjudications:
            adjudications.append(rec)
            continue
        feeder.feed(rec)
    for rec in adjudications:
        try:
            feeder.feed(rec)
        except BadRecord:
            bad += 1
    if bad:
        print(f"judgeflow: warning: {bad} malformed adjudication(s) (or of an unknown task) "
              "ignored", file=sys.stderr)
    return cal


def run(args: argparse.Namespace, settings: Settings) -> int:
    from agents.calibrate.compare import AmbiguousVersion, compare, render, resolve_version

    if (args.old is None) != (args.new is None):
        print("judgeflow: compare takes two versions (OLD NEW) or none", file=sys.stderr)
        return ExitCode.USAGE
    cal = event_loop.run(gather(settings))
    if args.old is None:
        return _by_model(cal, args, settings)
    known = sorted({v for _, _, v in cal.groups()})
    try:  # any unambiguous prefix of a version names it (the demo's table prints it whole)
        args.old, args.new = (resolve_version(v, known) for v in (args.old, args.new))
    except AmbiguousVersion as exc:
        raise CommandError(str(exc)) from None
    missing = [v for v in (args.old, args.new) if v not in known]
    if len(missing) == 2:
        raise CommandError(f"no judge results under {args.old!r} or {args.new!r}; versions on "
                           f"{settings.topics.judge_results}: {', '.join(known) or 'none'}",
                           ExitCode.FAILURE)
    for v in missing:
        print(f"judgeflow: warning: no judge results under {v!r}", file=sys.stderr)
    data = compare(cal, args.old, args.new, datetime.now(UTC), settings.review.min_cells)
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(render(data))
    return ExitCode.OK


def _by_model(cal: Any, args: argparse.Namespace, settings: Settings) -> int:
    from agents.calibrate.compare import by_model, render_by_model

    model = getattr(getattr(settings, "llm", None), "model", None)  # the current model
    data = by_model(cal, datetime.now(UTC), args.criterion, model,
                    settings.review.min_cells, settings.review.margin)
    if not data["series"]:
        where = f" for criterion {args.criterion!r}" if args.criterion else ""
        print(f"judgeflow: no judge results{where} on {settings.topics.judge_results}",
              file=sys.stderr)
        return ExitCode.FAILURE
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(render_by_model(data))
    return ExitCode.OK
