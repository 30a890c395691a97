"""The strict fake rejects what the real API rejects in a tool conversation."""

from __future__ import annotations

from typing import Any

import pytest

from tools.fakes.fake_tool_rules import tool_problem

TOOLS = [{"name": "read_note", "input_schema": {"type": "object"}}]
USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_note",
                                         "input": {}},
                                        {"type": "tool_use", "id": "t2", "name": "read_note",
                                         "input": {}}]}


def result(i: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": "x"}


def body(*later: dict[str, Any], tools: Any = TOOLS, **kw: Any) -> dict[str, Any]:
    out = {"messages": [{"role": "user", "content": "case"}, USE, *later], **kw}
    if tools is not None:
        out["tools"] = tools
    return out


@pytest.mark.parametrize(("request_body", "problem"), [
    (body({"role": "user", "content": [result("t1"), result("t2"),
                                       {"type": "text", "text": "go on"}]}), None),
    (body({"role": "user", "content": [result("t2"), result("t1")]}), None),
    (body(), None),  # a trailing tool_use turn is a prefill
    (body({"role": "user", "content": [result("t1")]}), "Did not find 2"),
    (body({"role": "user", "content": [{"type": "text", "text": "hi"}, result("t1"),
                                       result("t2")]}), "Did not find 2"),
    (body({"role": "user", "content": [result("t1"), result("t2"), result("t3")]}),
     "unexpected `tool_use_id`"),
    (body({"role": "user", "content": [result("t1"), result("t3")]}), "without `tool_result`"),
    (body({"role": "user", "content": [result("t1"), result("t2"), result("t1")]}),
     "only once"),
    (body({"role": "user", "content": "plain"}), "Did not find 2"),
    (body({"role": "user", "content": [result("t1"), result("t2")]}, tools=None),
     "must define tools"),
    ({"messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "auto"}},
     "tool_choice may only be specified"),
    (body(tools=[{"name": "read note", "input_schema": {"type": "object"}}]), "should match"),
    (body(tools=TOOLS * 2), "unique"),
    (body(tools=[{"name": "x", "input_schema": {"type": "string"}}]), "'object'"),
])
def test_tool_rules(request_body: dict[str, Any], problem: str | None) -> None:
    found = tool_problem(request_body)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found
