"""``judgeflow export``: the adjudications joined with the judge results, as CSV or Parquet."""

from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path
from typing import Any

from streams import event_loop
from streams.exit_codes import CommandError, ExitCode
from streams.settings import Settings
from streams.topics import read_to_end


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "export", help="the adjudications joined with the judge results, as CSV or Parquet",
        description="Reads the adjudications and the judge results to their current end "
        "(commits nothing) and writes one row per adjudication, joined with the judge "
        "result it verified: review mode (blind/verify) and slot, the reviewers' "
        "pseudonyms, the prompt version, the model, the judge's suggestion and hint. No note "
        "text and no reviewer comments. Columns: docs/calibration.md. Parquet needs pyarrow "
        "(pip install 'judgeflow[export]').")
    p.add_argument("output", metavar="FILE", type=Path,
                   help="where to write (.csv or .parquet; '-' writes CSV to stdout)")
    p.add_argument("--format", choices=("csv", "parquet"),
                   help="default: from the file name's extension")
    p.set_defaults(func=run)


async def gather(settings: Settings) -> tuple[list[Any], list[Any], int]:
    from pydantic import ValidationError

    from schemas.calibration import Adjudication
    from schemas.chart_review import JudgeResult

    t = settings.topics
    adjudications: list[Any] = []
    results: list[Any] = []
    bad = 0
    async for rec in read_to_end(settings.kafka, [t.judge_results, t.adjudications]):
        model = Adjudication if rec.topic == t.adjudications else JudgeResult
        try:
            item = model.model_validate_json(rec.value or b"")
        except ValidationError:
            bad += rec.topic == t.adjudications
            continue
        (adjudications if model is Adjudication else results).append(item)
    return adjudications, results, bad


def write_csv(rows: list[dict[str, Any]], columns: tuple[str, ...], out: Any) -> None:
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # missing, or present but broken (pyarrow >= 20 on numpy 1.x)
        raise CommandError(f"Parquet needs a working pyarrow ({exc}): pip install "
                           "'judgeflow[export]' (or write .csv)") from None
    return pa, pq


def check_output(output: Path, fmt: str) -> None:
    """Refuse an output that cannot be written before anything is read or audited: the
    trail must not record an export that then fails (a directory, a missing parent, no
    write permission, Parquet without pyarrow)."""
    if str(output) == "-":
        if fmt != "csv":
            raise CommandError("only CSV can go to stdout ('-')")
        return
    if output.is_dir():
        raise CommandError(f"{output} is a directory: give a file name to write")
    if not output.parent.is_dir():
        raise CommandError(f"no such directory: {output.parent}")
    existed = output.exists()
    try:  # opening tells what os.access does not (root on a read-only mount, /proc, ...)
        os.close(os.open(output, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600))
    except OSError as exc:
        raise CommandError(f"cannot write {output}: {exc.strerror}") from None
    if not existed:  # no empty file left behind if the export stops before writing
        output.unlink()
    if fmt == "parquet":
        _pyarrow()


def write_parquet(rows: list[dict[str, Any]], columns: tuple[str, ...], path: Path) -> None:
    pa, pq = _pyarrow()
    table = pa.Table.from_pylist(rows, schema=None) if rows else pa.table(
        {c: pa.array([], pa.string()) for c in columns})
    pq.write_table(table.select(list(columns)), path)


#: patients named per audit event of an export (a record stays far below Kafka's 1 MB)
AUDIT_PATIENTS_PER_EVENT = 2000


async def audit_export(settings: Settings, table: list[dict[str, Any]]) -> None:
    """The export's access audit events (docs/security.md "Access audit"), acknowledged by
    the broker before the file is written: no trail, no export. Patient ids only."""
    import getpass
    import re
    import uuid
    from datetime import UTC, datetime

    from dashboard.writer import WriteFailed, Writer
    from schemas.audit import AuditEvent

    patients = sorted({str(r["patient_id"]) for r in table if r.get("patient_id")})
    operator = re.sub(r"[^A-Za-z0-9._-]", "_", getpass.getuser())[:64] or "unknown"
    writer = Writer(settings.kafka, settings.topics.audit)
    try:
        for start in range(0, max(len(patients), 1), AUDIT_PATIENTS_PER_EVENT):
            event = AuditEvent(
                audit_id=uuid.uuid4().hex, at=datetime.now(UTC), action="export",
                session=f"cli-{operator}", route="judgeflow export",
                patient_ids=tuple(patients[start:start + AUDIT_PATIENTS_PER_EVENT]),
                records=len(table))
            await writer.send_record(*event.to_record())
    except WriteFailed:
        raise CommandError("the access audit trail did not acknowledge this export, so "
                           "nothing was written; check the broker and the principal's "
                           f"Write ACL on {settings.topics.audit}") from None
    finally:
        await writer.close()


def run(args: argparse.Namespace, settings: Settings) -> int:
    from agents.calibrate.export import COLUMNS, rows

    fmt = args.format or ("parquet" if args.output.suffix == ".parquet" else "csv")
    check_output(args.output, fmt)
    adjudications, results, bad = event_loop.run(gather(settings))
    table = rows(adjudications, results)
    event_loop.run(audit_export(settings, table))
    if str(args.output) == "-":
        write_csv(table, COLUMNS, sys.stdout)
    elif fmt == "csv":
        with args.output.open("w", encoding="utf-8", newline="") as out:
            write_csv(table, COLUMNS, out)
    else:
        write_parquet(table, COLUMNS, args.output)
    if bad:
        print(f"judgeflow: warning: {bad} malformed adjudication(s) skipped", file=sys.stderr)
    if str(args.output) != "-":
        print(f"wrote {len(table)} adjudication(s) to {args.output} ({fmt})", file=sys.stderr)
    return ExitCode.OK
