"""``judgeflow.replay-batches.v1`` (internal): a Message Batch a replay submitted.

Written (acks=all) right after the API accepted the batch and before any polling, keyed by
the replay's consumer group, so a replay killed between submit and collect finds its batch
again and collects it instead of paying for the jobs a second time.
"""

from __future__ import annotations

from schemas.base import AwareTime, Frozen


class ReplayBatch(Frozen):
    schema_version: int = 1
    #: the replay's consumer group (worker + prompt version + filters)
    group: str
    input_topic: str
    prompt_version: str
    batch_id: str
    #: one per job: the job's result id under this version
    custom_ids: tuple[str, ...]
    submitted_at: AwareTime
