"""streams.settings: list settings written as one environment string, and every value the
settings refuse at load (a bootstrap list, inf/nan, a topic name, an empty state directory),
each in one line naming the variable to fix."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from pydantic import BaseModel, ValidationError

from agents.providers.settings import LLMSettings
from agents.settings import Settings
from streams.kafka_settings import KafkaSettings
from streams.settings import TopicSettings, comma_list
from streams.settings_env import describe_settings
from streams.settings_rules import GROUP_MAX, TOPIC_MAX, bootstrap_problem, topic_problem


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


# --- values pydantic's types cannot check, each refused at settings load naming its variable

def _refusal(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> str:
    """The one line ``cli/errors`` prints for ``name=value`` (its ValidationError in words)."""
    monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError) as caught:
        Settings()
    return describe_settings(caught.value, Settings)


@pytest.mark.parametrize("value", [
    "127.0.0.1:9092", "kafka-1.example.org:9093,kafka-2.example.org:9093", " a:1 , b:65535 ",
    "[::1]:9092", "[fe80::1%eth0]:9092", "under_score.local:1",
])
def test_bootstrap_lists_aiokafka_can_split(value: str) -> None:
    assert bootstrap_problem(value) is None


@pytest.mark.parametrize(("value", "says"), [
    ("", "is empty"),
    ("   ", "is empty"),
    ("127.0.0.1:99999", "'127.0.0.1:99999': the port must be a number from 1 to 65535"),
    ("127.0.0.1:0", "the port must be a number from 1 to 65535"),
    ("127.0.0.1:abc", "'127.0.0.1:abc': the port must be"),
    ("127.0.0.1:-1", "the port must be"),
    ("127.0.0.1:²", "the port must be"),
    ("127.0.0.1", "has no port"),
    (":9092", "has no port"),
    ("a:1,,b:2", "has an empty entry"),
    ("a:1,", "has an empty entry"),
    ("::1:9092", "put an IPv6 address in brackets"),
    ("[nope]:9092", "[nope] is not an IPv6 address"),
    ("[::1]", "has no port"),
    ("kafka 1:9092", "is not a host name or address"),
    ("kafka://a:9092", "is not a host name or address"),
])
def test_a_bootstrap_list_that_would_crash_a_client_is_refused(
        value: str, says: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert says in (bootstrap_problem(value) or "")
    line = _refusal(monkeypatch, "JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS", value)
    assert line.startswith("JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS: ") and says in line


def _float_variables(model: type[BaseModel], prefix: str = "JUDGEFLOW_") -> list[str]:
    """Every float setting's variable, nested groups included (found, not listed: a float
    added later is covered too)."""
    found: list[str] = []
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            found += _float_variables(kind, f"{prefix}{name.upper()}__")
        elif float in (kind, *get_args(kind)):
            found.append(prefix + name.upper())
    return found


FLOATS = _float_variables(Settings)


def test_the_float_settings_are_found_in_every_group() -> None:
    assert {"JUDGEFLOW_SETTLE_SECONDS", "JUDGEFLOW_KAFKA__COMMIT_INTERVAL_SECONDS",
            "JUDGEFLOW_KAFKA__CONNECT_TIMEOUT_SECONDS", "JUDGEFLOW_LLM__DEADLINE_SECONDS",
            "JUDGEFLOW_REVIEW__CLAIM_SECONDS", "JUDGEFLOW_CHART_TOOLS__MAX_USD"} <= set(FLOATS)


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e400", "Infinity"])
def test_no_float_setting_accepts_inf_or_nan(name: str, value: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    assert _refusal(monkeypatch, name, value) == f"{name}: Input should be a finite number"


def test_a_nested_group_built_in_code_is_finite_too() -> None:
    with pytest.raises(ValidationError, match="finite"):
        KafkaSettings(connect_timeout_seconds=float("inf"))
    with pytest.raises(ValidationError, match="finite"):
        LLMSettings(deadline_seconds=float("nan"))


@pytest.mark.parametrize(("name", "value", "line"), [
    ("JUDGEFLOW_SETTLE_SECONDS", "abc", "JUDGEFLOW_SETTLE_SECONDS: Input should be a valid "
     "number, unable to parse string as a number"),
    ("JUDGEFLOW_KAFKA__PARTITIONS", "0",
     "JUDGEFLOW_KAFKA__PARTITIONS: Input should be greater than or equal to 1"),
    ("JUDGEFLOW_LLM__SERVER", "nginx", "JUDGEFLOW_LLM__SERVER: Input should be 'vllm', "
     "'ollama', 'llamacpp' or 'generic'"),
    ("JUDGEFLOW_LOG_LEVEL", "LOUD",
     "JUDGEFLOW_LOG_LEVEL: must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    ("JUDGEFLOW_EXPECTED_AGENTS", ",", "JUDGEFLOW_EXPECTED_AGENTS: must name at least one agent"),
    ("JUDGEFLOW_LLM__CRITERION_MODELS", '{"hba1c": {"effort": "huge"}}',
     "JUDGEFLOW_LLM__CRITERION_MODELS (hba1c.effort): Input should be 'low', 'medium', "
     "'high', 'xhigh' or 'max'"),
    # a group's own check names its variables itself: no prefix
    ("JUDGEFLOW_KAFKA__SASL_MECHANISM", "PLAIN", "JUDGEFLOW_KAFKA__SASL_MECHANISM=PLAIN needs "
     "JUDGEFLOW_KAFKA__SECURITY_PROTOCOL SASL_SSL or SASL_PLAINTEXT, not "
     "JUDGEFLOW_KAFKA__SECURITY_PROTOCOL=PLAINTEXT"),
])
def test_a_bad_value_is_named_by_its_variable(name: str, value: str, line: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    assert _refusal(monkeypatch, name, value) == line


def test_a_refused_value_is_never_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SASL_MECHANISM", "SCRAM-SHA-512")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SASL_USERNAME", "judge")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SASL_PASSWORD", "pw-Jane-Q-Patient")
    line = _refusal(monkeypatch, "JUDGEFLOW_KAFKA__PARTITIONS", "Jane-Q-Patient")
    assert line.startswith("JUDGEFLOW_KAFKA__PARTITIONS: ") and "Jane" not in line


@pytest.mark.parametrize("value", ["chart-review.judge-jobs.v1", "a", "A_b-c.9", "x" * TOPIC_MAX])
def test_legal_topic_names(value: str) -> None:
    assert topic_problem(value) is None


@pytest.mark.parametrize("value", ["", "bad topic", ".", "..", "x" * (TOPIC_MAX + 1),
                                   "a/b", "tópico", "a:b"])
@pytest.mark.parametrize("name", ["JUDGEFLOW_TOPICS__JUDGE_JOBS", "JUDGEFLOW_TOPICS__AUDIT"])
def test_an_illegal_topic_name_is_refused(name: str, value: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert topic_problem(value)
    line = _refusal(monkeypatch, name, value)
    assert line.startswith(f"{name}: a Kafka topic name is 1 to 245 characters")


@pytest.mark.parametrize("value", ["", "../../tmp/x", ".", "..", "a b", "g/h",
                                   "x" * (GROUP_MAX + 1)])
def test_a_detect_group_that_would_name_a_path_or_an_illegal_topic_is_refused(
        value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # detect's group names its state folder (state_dir / group) and Faust's changelog topics
    line = _refusal(monkeypatch, "JUDGEFLOW_GROUPS__DETECT", value)
    assert line.startswith("JUDGEFLOW_GROUPS__DETECT: a consumer group name is 1 to "
                           f"{GROUP_MAX} characters")


@pytest.mark.parametrize("name", ["JUDGEFLOW_GROUPS__JUDGE", "JUDGEFLOW_GROUPS__DEBRIEF"])
def test_other_groups_take_any_id_kafka_takes_but_not_an_empty_one(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _refusal(monkeypatch, name, " ") == (
        f"{name}: is empty: unset it for the default, or name a group")
    monkeypatch.setenv(name, "team:judge/1")  # names no folder and no topic
    assert "team:judge/1" in Settings().groups.model_dump().values()


@pytest.mark.parametrize("value", ["judgeflow-detect", "g.team_2-detect", "x" * GROUP_MAX])
def test_a_legal_detect_group_is_kept(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEFLOW_GROUPS__DETECT", value)
    assert Settings().groups.detect == value


def test_the_longest_topic_leaves_room_for_its_dead_letter_topic() -> None:
    assert len(TopicSettings.dlq("x" * TOPIC_MAX)) == 249


@pytest.mark.parametrize("value", ["", "  "])
@pytest.mark.parametrize(("name", "unset"), [("JUDGEFLOW_STATE_DIR", "var/state"),
                                             ("JUDGEFLOW_SKILL_DIR", "the sample skill"),
                                             ("JUDGEFLOW_CHARTS_DIR", "the sample charts")])
def test_an_empty_directory_setting_is_not_the_working_directory(
        value: str, name: str, unset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    line = _refusal(monkeypatch, name, value)
    assert line == (f"{name}: is empty (that would be the working directory): unset it for "
                    f"{unset}, or name a directory")


def test_a_state_dir_given_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEFLOW_STATE_DIR", "/srv/judgeflow")
    assert Settings().state_dir == Path("/srv/judgeflow")
