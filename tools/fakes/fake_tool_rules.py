"""What the fake Anthropic API rejects in a client tool conversation, as the real one does
(400 ``invalid_request_error``; the messages follow the API's wording):

* a ``tool_use``/``tool_result`` block in the messages while no ``tools`` are defined;
* ``tool_choice`` without ``tools``; a tool whose name is not ``^[a-zA-Z0-9_-]{1,64}$`` or
  whose ``input_schema`` is not an object schema; two tools of one name;
* an assistant ``tool_use`` not answered by a ``tool_result`` in the very next message
  (which must be a user message), or answered after other content: the results come first;
* a ``tool_result`` whose ``tool_use_id`` is not a ``tool_use`` of the previous assistant
  message, or a ``tool_use`` id answered twice.

Used by :func:`tools.fakes.fake_rules.validate` (every Messages and batched request). The
thinking-block rules (signatures, blocks passed back unmodified) are in fake_rules.
"""

from __future__ import annotations

import re
from typing import Any

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _tools_problem(body: dict[str, Any]) -> str | None:
    tools = body.get("tools") or []
    if body.get("tool_choice") is not None and not tools:
        return "tool_choice: tool_choice may only be specified while providing tools"
    names: set[str] = set()
    for i, tool in enumerate(tools):
        name = tool.get("name")
        if tool.get("type") not in (None, "custom"):
            continue  # a server tool: its own rules
        if not isinstance(name, str) or not _NAME.match(name):
            return f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        if name in names:
            return f"tools: Tool names must be unique. Duplicate: {name}"
        names.add(name)
        schema = tool.get("input_schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            return f"tools.{i}.custom.input_schema.type: Input should be 'object'"
    return None


def tool_problem(body: dict[str, Any]) -> str | None:
    """The first tool-use rule ``body`` breaks, or None."""
    if (p := _tools_problem(body)) is not None:
        return p
    messages = body.get("messages") or []
    uses_tools = any(b.get("type") in ("tool_use", "tool_result")
                     for m in messages for b in _blocks(m))
    if uses_tools and not body.get("tools"):
        return "Requests which include `tool_use` or `tool_result` blocks must define tools."
    for n, m in enumerate(messages):
        ids = [b.get("id") for b in _blocks(m) if b.get("type") == "tool_use"]
        asked = ids if m.get("role") == "assistant" else []
        nxt = messages[n + 1] if n + 1 < len(messages) else None
        if m.get("role") == "user":
            prev = messages[n - 1] if n > 0 else None
            allowed = {b.get("id") for b in _blocks(prev) if b.get("type") == "tool_use"} \
                if prev is not None and prev.get("role") == "assistant" else set()
            answered = [b.get("tool_use_id") for b in _blocks(m) if b.get("type") == "tool_result"]
            stray = [i for i in answered if i not in allowed]
            if stray:
                return (f"messages.{n}.content: unexpected `tool_use_id` found in `tool_result` "
                        f"blocks: {stray[0]}. Each `tool_result` block must have a "
                        "corresponding `tool_use` block in the previous message.")
            if len(set(answered)) != len(answered):
                return f"messages.{n}.content: each `tool_use` id may be answered only once"
        if not asked or nxt is None:
            continue  # a trailing assistant turn is a prefill, not a call
        first = _blocks(nxt)[:len(asked)]
        if nxt.get("role") != "user" or len(first) < len(asked) or any(
                b.get("type") != "tool_result" for b in first):
            return (f"messages.{n + 1}: Did not find {len(asked)} `tool_result` block(s) at the "
                    "beginning of this message. Messages following `tool_use` blocks must "
                    "begin with a matching number of `tool_result` blocks.")
        missing = [i for i in asked if i not in {b.get("tool_use_id") for b in first}]
        if missing:
            return (f"messages.{n}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {missing[0]}. Each `tool_use` block must have a "
                    "corresponding `tool_result` block in the next message.")
    return None
