from agents.debrief.prompt import SYSTEM, TOOL, build_request, parse_user_message
from schemas.medkit import render_case_evaluation_tool
from tests.unit.agents.debrief.support import request_in, sample


def test_system_prompt_states_the_rules_and_never_mentions_the_legacy_tool() -> None:
    text = SYSTEM.lower()
    assert "render_case_grade" not in text
    for needle in ("recid", "verbatim", "safety breach:", "real patient", "exactly once",
                   "0.85", "clear-fail"):
        assert needle in text, needle


def test_the_tool_sent_is_generated_from_the_model() -> None:
    assert render_case_evaluation_tool() == TOOL


def test_the_user_message_round_trips_the_request() -> None:
    req = sample("req-pf-002")
    message = build_request(req, req.rubric, "authored", 512)  # type: ignore[arg-type]
    assert message.max_tokens >= 4096
    body = {"messages": list(message.messages)}
    assert request_in(body).model_dump(exclude={"trainee_id"}) == req.model_dump(
        exclude={"trainee_id"})
    assert parse_user_message(message.messages[0]["content"])["rubric_source"] == "authored"
