"""The access audit trail's own ACLs on Apache Kafka with an authorizer: ``judgeflow audit``
works as the ``auditor`` principal holding exactly ``kafka acls --role auditor`` (Read on
the trail), and is refused in one line without it; the review page's ``reviewer``
principal writes the trail but cannot read it back (append only)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from schemas.audit import AuditEvent, NoteSpan
from streams.kafka_acls import role_acls
from tests.helpers import produce
from tests.integration.test_kafka_security import (  # noqa: F401  (the secured broker)
    as_role,
    granted,
    kafka,
    one_line_error,
    run_cli,
)
from tools.kafka import ApacheKafka

pytestmark = pytest.mark.integration


def viewed(patient: str) -> bytes:
    return AuditEvent(audit_id="a1", at=datetime(2026, 12, 3, 9, tzinfo=UTC),
                      action="view_cell", reviewer="rv-00112233aabbccdd", session="ss-1",
                      route="GET /api/cell/{rid}", patient_ids=(patient,), result_id="r1",
                      notes=(NoteSpan(note_id="n-1", spans=((5, 9),)),)
                      ).model_dump_json().encode()


def test_the_auditor_reads_the_trail_and_the_page_cannot(kafka: ApacheKafka,  # noqa: F811
                                                         tmp_path: Path) -> None:
    principal, s, admin = as_role(kafka, tmp_path, "auditor", "mtls", "audit")
    asyncio.run(produce(admin.kafka, admin.topics.audit, [(b"P033", viewed("P033"))]))
    with granted(kafka, principal, role_acls("auditor", s)):
        check, _ = run_cli(s, "kafka", "check", "--role", "auditor")
        assert check.returncode == 0 and "MISSING" not in check.stdout, check.stdout
        ok, _ = run_cli(s, "audit", "--patient", "P033")
    assert ok.returncode == 0, ok.stderr
    assert "rv-00112233aabbccdd view_cell       P033     notes n-1[5:9]" in ok.stdout
    refused, _ = run_cli(s, "audit", "--patient", "P033")  # the grant is gone
    assert refused.returncode != 0
    assert "not authorized to Read topic" in one_line_error(refused)

    (tmp_path / "page").mkdir()
    page, ps, page_admin = as_role(kafka, tmp_path / "page", "reviewer", "mtls", "audit-page")
    asyncio.run(produce(page_admin.kafka, ps.topics.audit, [(b"P033", viewed("P033"))]))
    with granted(kafka, page, role_acls("reviewer", ps)):
        denied, _ = run_cli(ps, "audit", "--patient", "P033")
    assert denied.returncode != 0
    assert "denies this principal access to topic" in one_line_error(denied)
