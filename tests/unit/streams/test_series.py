"""Series: which result ids exist, and which result a new version's result supersedes."""

from __future__ import annotations

from streams.series import Series, result_headers


def test_supersedes_names_the_latest_result_of_another_version() -> None:
    s = Series()
    assert s.supersedes("job-1", "judge-v3+a") is None
    s.add("job-1", "judge-v2+x", "r-old", {"output_tokens": 90, "llm_calls": 1})
    s.add("job-1", "judge-v3+a", "r-a")
    assert s.supersedes("job-1", "judge-v3+a") == "r-old"
    assert s.supersedes("job-1", "judge-v4+b") == "r-a"  # the latest other version
    s.add("job-1", "judge-v2+x", "r-old")  # republished later: now the latest
    assert s.supersedes("job-1", "judge-v4+b") == "r-old"
    assert s.ids == {"r-old", "r-a"} and s.counts == {"judge-v2+x": 2, "judge-v3+a": 1}
    assert s.output_tokens == {"judge-v2+x": [90, 1]}


def test_headers_carry_the_series_and_supersedes_only_when_known() -> None:
    assert dict(result_headers("r", "v", "job_id", "j", None)) == {
        "result_id": b"r", "prompt_version": b"v", "job_id": b"j"}
    assert dict(result_headers("r", "v", "request_id", "q", "r0"))["supersedes"] == b"r0"
