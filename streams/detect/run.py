"""Run the detect worker process (used by ``judgeflow worker detect``)."""

from __future__ import annotations

import gc
import logging

import faust

from schemas.skill import load_skill
from streams import event_loop
from streams.app import base_app
from streams.detect.faust_edge import register_detect
from streams.kafka_clients import join_group
from streams.logjson import apply_format
from streams.logsafety import guard_third_party_loggers
from streams.metrics import Metrics
from streams.settings import Settings
from streams.topics import ensure_topics
from streams.worker_main import guarded

log = logging.getLogger(__name__)


def run_worker(settings: Settings) -> int:
    return guarded("detect", lambda: _run(settings))


def _run(settings: Settings) -> None:
    skill = load_skill(settings.skill_dir)  # fail fast on a broken skill folder
    counts = event_loop.run(_prepare(settings))
    partitions = counts[settings.topics.agent_answers]
    warning = partition_warning(settings.topics.agent_answers, partitions,
                                settings.kafka.partitions)
    if warning:
        log.warning("%s", warning)
    metrics = Metrics.create()
    metrics.serve(settings.metrics_port, settings.metrics_host)
    (settings.state_dir / settings.groups.detect).mkdir(parents=True, exist_ok=True)
    app = base_app(settings, settings.groups.detect, partitions)
    register_detect(app, settings, skill, metrics, partitions)
    log.info("detect worker: %d criteria, %d partitions, expected agents %s, settle %.1fs",
             len(skill.criteria), partitions, ",".join(settings.expected_agents),
             settings.settle_seconds)
    worker = QuietWorker(app, loglevel=settings.log_level, quiet=True)
    worker.judgeflow_log_format = settings.log_format
    event_loop.prepared(worker.loop)
    # What start-up built (Faust, the skill, pydantic's validators) lives as long as the
    # process: out of the collector's reach, the full collections the hot path's garbage
    # triggers scan only what the stream made.
    gc.freeze()
    worker.execute_from_commandline()


async def _prepare(settings: Settings) -> dict[str, int]:
    """Topics exist and the group may be joined (the factory checks the connection first)."""
    counts = await ensure_topics(settings, role="detect")
    await join_group(settings.kafka, settings.groups.detect)
    return counts


def partition_warning(topic: str, found: int, expected: int) -> str | None:
    """What to tell the operator when the input topic has fewer partitions than configured
    (e.g. it was auto-created by a producer with the broker's default of one)."""
    if found >= expected:
        return None
    return (f"input topic {topic} has {found} partition(s), fewer than the {expected} this "
            f"worker expects (kafka.partitions): at most {found} detect worker(s) can share "
            f"the work, so scale-out is capped; to fix, add partitions to {topic} (and "
            f"recreate the ticks topic) before the first cell is stored")


class QuietWorker(faust.Worker):
    """A Faust worker without the terminal spinner.

    At WARNING and above, Faust installs a spinner handler and lowers the root logger to DEBUG
    so the spinner turns on every record: every debug call (including Faust's per-message
    ``send: ... v=...`` record, which carries the value) is then built and discarded. That
    cost a large share of the detector's CPU; it also wrote terminal control codes to logs.
    """

    judgeflow_log_format = "text"  # JUDGEFLOW_LOG_FORMAT, set by run()

    def on_setup_root_logger(self, logger: logging.Logger, level: int) -> None:
        self.spinner = None
        # Faust replaced the root handlers that main() set up (and their PHI filter): the
        # guard goes on the new ones, or detect's DEBUG tracebacks would quote their input.
        guard_third_party_loggers()
        # Faust logs a failed send at WARNING with the whole message (key and value: PHI);
        # the detect Faust edge reports such a failure by type and stops the worker instead.
        logging.getLogger("faust.topics").setLevel(logging.ERROR)
        apply_format(self.judgeflow_log_format)  # Faust's handler: same format, PHI filter
