"""streams.settings: list settings written as one environment string."""

from __future__ import annotations

import pytest

from agents.settings import Settings
from streams.settings import comma_list


@pytest.mark.parametrize(("value", "expected"), [
    ("a,b", ("a", "b")),
    (" a , b ,, ", ("a", "b")),
    ("", ()),
    (("a",), ("a",)),  # not a string: pydantic validates it as it is
])
def test_comma_list(value: object, expected: object) -> None:
    assert comma_list(value) == expected


def test_each_list_setting_reads_one_string(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEFLOW_TASKS", "t2dm-ckd-v1, other ")
    monkeypatch.setenv("JUDGEFLOW_EXPECTED_AGENTS", "default,skeptical,")
    monkeypatch.setenv("JUDGEFLOW_DEBRIEF_CASES", "case-1")
    s = Settings()
    assert s.tasks == ("t2dm-ckd-v1", "other")
    assert s.expected_agents == ("default", "skeptical")
    assert s.debrief_cases == ("case-1",)


def test_no_expected_agent_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEFLOW_EXPECTED_AGENTS", " , ")
    with pytest.raises(ValueError, match="at least one agent"):
        Settings()
