"""A second baseline for ``bench detect --core``: the least a detector written in Python does
per event, with none of our guarantees.

It decodes each answer, checks the four ids with one pattern and the time with another,
builds the answer as stored, keeps each cell as one dict, and on a cell's second answer
hashes the inputs (three sha256 ids), builds the outcome (and a job when the raw answers
differ), encodes them and the cell. No normalisation, duplicate or redelivery checks, size
limits, settle window, cold compression, or records (dataclasses) of any kind. It is not a
detector anyone should ship; it tells how far below our figure Python itself can go on the
same events and machine, which the goal is read against.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

import orjson

_IDS = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}(?:\|[A-Za-z0-9][A-Za-z0-9._-]{0,127}){3}")
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.(\d{1,6}))?(Z|[+-]\d\d:\d\d)")


def _id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def bare_loop(values: list[bytes]) -> Callable[[], None]:
    def run() -> None:
        cells: dict[str, dict[str, Any]] = {}
        out: list[bytes] = []
        for offset, raw in enumerate(values):
            d = orjson.loads(raw)
            ids = "|".join((d["task_id"], d["patient_id"], d["field_id"], d["agent_id"]))
            stamp = d["emitted_at"]
            if _IDS.fullmatch(ids) is None or _STAMP.fullmatch(stamp) is None:
                raise ValueError("not the bench's records")
            datetime.fromisoformat(stamp)
            answer = {"schema_version": 1, "event_id": d["event_id"], "run_id": d["run_id"],
                      "task_id": d["task_id"], "patient_id": d["patient_id"],
                      "field_id": d["field_id"], "agent_id": d["agent_id"],
                      "answer": d["answer"], "evidence": d.get("evidence", []),
                      "rationale": d.get("rationale", ""),
                      "confidence": d.get("confidence", "medium"),
                      "low_confidence_reason": None, "emitted_at": stamp}
            key = ids[:ids.rindex("|")]
            cell = cells.get(key)
            if cell is None:
                cell = cells[key] = {"first_seen": 1.0, "answers": {d["agent_id"]: answer},
                                     "seen_events": [d["event_id"]], "history": []}
                out.append(orjson.dumps(cell))
                continue
            cell["answers"][d["agent_id"]] = answer
            cell["seen_events"].append(d["event_id"])
            a, b = cell["answers"].values()
            inputs = _id(key, *[orjson.dumps([x["agent_id"], x["answer"]]).decode()
                                for x in (a, b)])
            job = a["answer"] != b["answer"]
            records = [{"outcome_id": _id("outcome", inputs),
                        "outcome": "disagreement" if job else "agreement",
                        "task_id": a["task_id"], "patient_id": a["patient_id"],
                        "field_id": a["field_id"], "agents": [a["agent_id"], b["agent_id"]],
                        "missing_agents": [], "job_id": None, "job_kind": None, "reasons": [],
                        "decided_at": "", "settled_by_timeout": False,
                        "agreed_answer": a["answer"]}]
            if job:
                records.append({"job_id": _id("job", inputs, "disagreement"),
                                "kind": "disagreement", "answers": [a, b],
                                "normalized": [a["answer"], b["answer"]], "reasons": []})
            out += [orjson.dumps(r) for r in records]
            cell["history"].append([["answers", 0, offset], records])
            out.append(orjson.dumps(cell))

    return run
