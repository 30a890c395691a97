"""``judgeflow audit --patient P | --reviewer R``: who was shown which patient's text.

Reads the access audit trail (``judgeflow.audit.v1``, :mod:`schemas.audit`) from its start
to its current end, commits nothing, and prints the matching events oldest first, then a
summary line. ``--reviewer`` takes the pseudonym (``rv-...``) or, with the page's reviewer
key in reach (``JUDGEFLOW_DASHBOARD_REVIEWER_KEY`` or the state directory's key file), the
reviewer's name. Runs as the ``auditor`` principal (Read on the trail, nothing else).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TextIO

import orjson
from pydantic import ValidationError

from dashboard.identity import KEY_ENV, pseudonym, reviewer_key
from schemas.audit import AuditEvent, matches, spans_text, who_saw
from streams import event_loop
from streams.exit_codes import CommandError, ExitCode
from streams.kafka_check import topic_denied
from streams.settings import Settings
from streams.topics import read_to_end


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "audit", help="who viewed a patient's text, or what a reviewer viewed",
        description="Answer the governance questions from the access audit trail "
        "(judgeflow.audit.v1): every view of patient text on the review page, every "
        "decision, export and sign-in, by reviewer pseudonym, session, note and span. "
        "Reads the whole topic; commits nothing.")
    p.add_argument("--patient", metavar="P", help="events that showed patient P")
    p.add_argument("--reviewer", metavar="R",
                   help="events of reviewer R (pseudonym rv-..., or a name when the "
                   f"reviewer key is in reach: ${KEY_ENV} or the state directory)")
    p.add_argument("--json", action="store_true", help="one JSON event a line")
    p.set_defaults(func=run)


def reviewer_id(given: str, settings: Settings) -> str:
    if given.startswith("rv-"):
        return given
    try:  # only read: the page makes the key on its first start, a reader never does
        key = reviewer_key(os.environ.get(KEY_ENV), settings.state_dir, create=False)
    except FileNotFoundError as exc:
        raise CommandError(f"audit: {exc} (the review page creates it on first start; point "
                           "JUDGEFLOW_STATE_DIR at the page's state folder, or set "
                           f"{KEY_ENV}, or give the rv-... id)") from None
    except (OSError, ValueError) as exc:
        raise CommandError(f"audit: cannot derive {given!r}'s pseudonym without the page's "
                           f"reviewer key ({exc}); give the rv-... id") from None
    return pseudonym(key, given)


async def read_events(settings: Settings) -> tuple[list[AuditEvent], int]:
    """Every event on the trail now, and how many records were not audit events."""
    topic, events, bad = settings.topics.audit, [], 0
    if await topic_denied(settings, topic):
        raise CommandError(f"not authorized to Read topic {topic!r} (the auditor "
                           "principal; see `judgeflow kafka check --role auditor`)",
                           ExitCode.FAILURE)
    async for rec in read_to_end(settings.kafka, [topic]):
        try:
            events.append(AuditEvent.model_validate(orjson.loads(rec.value or b"")))
        except (orjson.JSONDecodeError, ValidationError):
            bad += 1
    events.sort(key=lambda e: e.at)
    return events, bad


def show(events: list[AuditEvent], out: TextIO) -> None:
    for e in events:
        what = spans_text(e.notes) or "-"
        extra = (f" adjudication {e.adjudication_id}" if e.adjudication_id else "") + (
            f" records {e.records}" if e.records is not None else "")
        print(f"{e.at.isoformat(timespec='seconds')}  {e.reviewer or '(access token)':<19} "
              f"{e.action:<15} {','.join(e.patient_ids) or '-':<8} notes {what}  "
              f"session {e.session}  {e.route}{extra}", file=out)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if not args.patient and not args.reviewer:
        raise CommandError("audit: give --patient P or --reviewer R (or both)")
    reviewer = reviewer_id(args.reviewer, settings) if args.reviewer else None
    events, bad = event_loop.run(read_events(settings))
    found = [e for e in events if matches(e, args.patient, reviewer)]
    if args.json:
        for e in found:
            sys.stdout.write(e.model_dump_json(exclude_none=True) + "\n")
        return ExitCode.OK
    show(found, sys.stdout)
    subject = " and ".join(x for x in (args.patient and f"patient {args.patient}",
                                      reviewer and f"reviewer {reviewer}") if x)
    seen = who_saw(e for e in found if e.action != "sign_in_refused")
    viewers = ", ".join(f"{r} ({n})" for r, n in seen.items()) or "nobody"
    print(f"{subject}: {len(found)} event(s) of {len(events)} on {settings.topics.audit}; "
          f"by {viewers}" + (f"; {bad} record(s) not audit events" if bad else ""))
    return ExitCode.OK
