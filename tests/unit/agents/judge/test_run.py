"""Worker edges that need no broker: decoding jobs, refusing to start without a key."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agents.errors import AgentsError
from agents.judge.run import decode_job, run_worker, serve
from agents.settings import Settings
from streams.errors import BadRecord
from streams.exit_codes import CommandError
from tests.unit.agents.judge.fixtures import disagreement, write_charts, write_skill


def test_a_record_that_is_not_a_judge_job_is_a_bad_record() -> None:
    job = disagreement()
    assert decode_job(job.model_dump_json().encode()) == job
    data = job.model_dump(mode="json")
    data["normalized"] = ["HOLE", *data["normalized"][1:]]
    template = orjson.dumps(data)

    def nested(depth: int) -> bytes:
        return template.replace(b'"HOLE"', b"[" * depth + b"1" + b"]" * depth)

    assert decode_job(nested(20)).normalized[0]  # plain nesting is fine
    cases = [(b"{not json", "invalid_json"), (None, "invalid_json"),
             (nested(300), "schema_error"),  # valid JSON beyond the parser's recursion limit
             (nested(100), "schema_error"),  # beyond MAX_JSON_DEPTH
             (template.replace(b'"HOLE"', b"NaN"), "schema_error"),
             (b'{"job_id": "x"}', "schema_error"),
             (b"[1]", "invalid_json")]  # not a JSON object: docs/contracts.md
    for raw, kind in cases:
        with pytest.raises(BadRecord) as err:
            decode_job(raw)
        assert err.value.error_type == kind, err.value.message


async def test_anthropic_without_a_key_refuses_to_start(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    settings = Settings(llm={"provider": "anthropic"}, skill_dir=write_skill(tmp_path),
                        charts_dir=write_charts(tmp_path),
                        kafka={"bootstrap_servers": "127.0.0.1:1"})
    with pytest.raises(AgentsError, match="ANTHROPIC_API_KEY"):
        await serve(settings)


def test_run_worker_exits_2_without_a_key(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    settings = Settings(llm={"provider": "anthropic"}, skill_dir=write_skill(tmp_path),
                        charts_dir=write_charts(tmp_path),
                        kafka={"bootstrap_servers": "127.0.0.1:1"})
    with pytest.raises(CommandError) as err:  # the command line prints it in one line
        run_worker(settings)
    assert err.value.code == 2 and "ANTHROPIC_API_KEY" in str(err.value)
