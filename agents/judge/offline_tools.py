"""The offline judge with the chart tools: a fixed, deterministic tool plan (no model).

When a cell is offered the tools (:meth:`agents.judge.judge.Judge.tools_for`), the offline
heuristic uses them as a model would, through the same tools and budget
(:class:`agents.judge.tool_loop.Trace`): it searches the whole chart for the criterion's
keywords and reads the span around the first hits in notes no agent cited, within the
cell's budget. Its answer (:func:`agents.judge.offline.offline_payload`) is unchanged; the
spans it read become pointers where the heuristic has room (at most three), so the
reviewer is sent to the mentions the agents missed, and the result's ``consulted`` lists
what was searched and read. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agents.chart_tool_settings import ChartToolsSettings
from agents.context.assemble import cited_notes
from agents.judge.chart_tools import READ, SEARCH, WINDOW, run_tool
from agents.judge.tool_loop import Trace
from schemas.chart_review import JudgeJob
from schemas.skill import Criterion

#: spans read per cell (the plan stops earlier when the budget is spent)
READS = 2


def explore(job: JudgeJob, criterion: Criterion, notes: Mapping[str, str],
            limits: ChartToolsSettings) -> Trace:
    trace = Trace(limits)
    if not criterion.keywords:
        return trace
    pattern = "|".join(re.escape(k) for k in criterion.keywords)
    found = run_tool(SEARCH, {"pattern": pattern}, notes)
    trace.add(SEARCH, found)
    cited = set(cited_notes(job.answers))
    reads = 0
    for hit in found.seen:
        if hit.note_id is None or hit.note_id in cited or reads >= READS:
            continue
        if (stop := trace.spent(0, 0.0)) is not None:
            trace.stopped = stop
            break
        trace.add(READ, run_tool(READ, {"note_id": hit.note_id, "start": hit.start - WINDOW,
                                        "end": hit.end + WINDOW}, notes))
        cited.add(hit.note_id)
        reads += 1
    return trace


def with_reads(payload: dict[str, Any], trace: Trace) -> dict[str, Any]:
    """``payload`` with pointers to the spans read (after its own, at most three)."""
    pointers = list(payload.get("evidence_pointers") or [])
    for s in trace.seen:
        if s.tool == READ and s.note_id is not None and len(pointers) < 3:
            pointers.append({"note_id": s.note_id, "what_to_look_for": "keyword mention no "
                             "agent cited", "offsets": [s.start, s.end]})
    return {**payload, "evidence_pointers": pointers}
