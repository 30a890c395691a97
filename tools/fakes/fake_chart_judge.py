"""A fake judge model that reads the chart with the judge's tools (a FakeAnthropic responder).

It decides from the request alone, as a model would: with tools offered (and ``tool_choice``
not ``none``) it first searches for the criterion's keywords and the synonyms it "knows"
(brand names, abbreviations: ``SYNONYMS``), then reads the span around up to ``reads`` hits
in notes the case did not show, then answers. The answer cites what it saw: the first
sentence of the excerpts or of what it read that mentions a term (a negation cue before the
term makes the answer negative), quoted verbatim, with a pointer at its offsets in the note.
Without tools it answers from the excerpts only, so on a chart whose deciding sentence lies
outside the assembled context the two differ: what ``replay`` + ``compare`` measure.
``calls_per_turn`` 2 makes its first turn two parallel tool calls (pairing tests).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from tools.fakes.fake_reply import Reply

_CELL = re.compile(r"Cell: task (\S+), patient (\S+), criterion (\S+)")
_CANON = re.compile(r"answer: .*\(canonical: (.*)\)$", re.MULTILINE)
_BLOCK = re.compile(r"<<DATA-(\w+) ([^>\n]*)>>\n(.*?)<<END-\1>>", re.DOTALL)
_LABEL = re.compile(r"^note (\S+?)[;( ].*?characters (\d+)-(\d+)")
_NEG = re.compile(r"\b(no|not|denies|denied|negative for|without|stopped|discontinued|never)\b",
                  re.I)
#: what the fake "knows" beyond a criterion's keywords
SYNONYMS: dict[str, tuple[str, ...]] = {
    "empagliflozin": ("jardiance", "synjardy"), "dapagliflozin": ("farxiga", "xigduo"),
    "canagliflozin": ("invokana",), "metformin": ("glucophage",),
    "insulin": ("tresiba", "degludec", "lantus"), "valsartan": ("entresto",),
    "diabetes": ("t2dm", "dm2", "niddm"), "a1c": ("glycated hemoglobin", "hba1c"),
}
SENTINELS = ("<JUDGE_ANALYSIS>", "</JUDGE_ANALYSIS>")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") if b.get("type") == "text" else _text(b.get("content"))
                     for b in content or [] if isinstance(b, dict))


def _blocks(text: str) -> list[tuple[str, int, str]]:
    """(note id, start offset, text) of every framed note span in ``text``."""
    out = []
    for m in _BLOCK.finditer(text):
        label = _LABEL.match(m.group(2))
        if label:
            out.append((label.group(1), int(label.group(2)), m.group(3)))
    return out


def _terms(body: dict[str, Any]) -> list[str]:
    system = _text(body.get("system") or [])
    line = re.search(r"^Keywords: (.*)$", system, re.MULTILINE)
    words = [w.strip().lower() for w in (line.group(1).split(",") if line else []) if w.strip()]
    return list(dict.fromkeys(words + [s for w in words for s in SYNONYMS.get(w, ())]))



def _enum(body: dict[str, Any]) -> list[Any]:
    system = _text(body.get("system") or [])
    under = system[system.find("# Criterion under review"):]  # not the skill's other criteria
    line = re.search(r"^answer_schema: (.*)$", under, re.MULTILINE)
    return list(json.loads(line.group(1)).get("enum") or []) if line else []


def _term(terms: list[str]) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(t) for t in terms) + r")\b", re.I)


def _find(spans: list[tuple[str, int, str]], terms: list[str]
          ) -> tuple[str, int, int, str, bool] | None:
    """The first sentence mentioning a term (whole words): (note, start, end, sentence,
    negated)."""
    if not terms:
        return None
    term = _term(terms)
    for note_id, start, text in spans:
        for m in re.finditer(r"[^.\n]+", text):
            sentence = m.group(0).strip()
            low = sentence.lower()
            found = term.search(low)
            hit = found.start() if found else None
            if hit is None or len(sentence.split()) < 3:
                continue
            at = start + m.start() + m.group(0).index(sentence)
            return note_id, at, at + len(sentence), sentence, bool(_NEG.search(low[:hit]))
    return None


def _results(messages: list[dict[str, Any]]) -> list[tuple[str, tuple[str, int, str]]]:
    """(tool name, framed span) of every tool result, in order."""
    names = {b.get("id"): b.get("name") for m in messages if m.get("role") == "assistant"
             for b in m.get("content") or [] if isinstance(b, dict)}
    return [(str(names.get(b.get("tool_use_id"))), span) for m in messages
            if m.get("role") == "user" and isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"
            for span in _blocks(_text(b.get("content")))]


def _tool_use(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name,
            "input": args}


class ChartJudge:
    def __init__(self, reads: int = 2, calls_per_turn: int = 1) -> None:
        self.reads, self.calls_per_turn = reads, calls_per_turn

    def __call__(self, body: dict[str, Any]) -> Reply:
        messages = body.get("messages") or []
        case = _text(messages[0].get("content")) if messages else ""
        if _CELL.search(case) is None:
            return Reply.message(text="ok")
        terms = _terms(body)
        shown = {n for n, _, _ in _blocks(case)}
        turns = [m for m in messages if m.get("role") == "assistant"]
        offered = {t.get("name") for t in body.get("tools") or []}
        if "search_notes" in offered and (body.get("tool_choice") or {}).get("type") != "none":
            calls = self._next_calls(messages, turns, terms, shown)
            if calls:
                reply = Reply.message(text=None, stop_reason="tool_use")
                reply.body["content"] = calls
                return reply
        # what it went to read weighs first (read_note results, in order), then the
        # excerpts, then the search windows
        results = _results(messages)
        reads = [b for name, b in results if name == "read_note"]
        windows = [b for name, b in results if name != "read_note"]
        return self._answer(body, case, reads + _blocks(case) + windows, terms)

    def _next_calls(self, messages: list[dict[str, Any]], turns: list[dict[str, Any]],
                    terms: list[str], shown: set[str]) -> list[dict[str, Any]]:
        if not turns:
            pattern = "|".join(re.escape(t) for t in terms) or "diagnos"
            calls = [_tool_use("search_notes", {"pattern": pattern})]
            if self.calls_per_turn > 1:
                calls.append(_tool_use("list_notes", {}))
            return calls
        brands = [s for t in terms for s in SYNONYMS.get(t, ())]
        searches = [b.get("input", {}).get("pattern") for t in turns
                    for b in t.get("content") or [] if isinstance(b, dict)
                    and b.get("name") == "search_notes"]
        hits = [h for m in messages if m.get("role") == "user"
                for h in _blocks(_text(m.get("content")))]
        unseen = _term(brands) if brands else None
        if unseen is not None and len(searches) == 1 and not any(
                unseen.search(h[2]) for h in hits):
            # the keyword hits filled the capped result: narrow to the names they miss
            return [_tool_use("search_notes", {"pattern": "|".join(map(re.escape, brands))})]
        reads = sum(1 for t in turns for b in t.get("content") or []
                    if isinstance(b, dict) and b.get("name") == "read_note")
        if reads >= self.reads:
            return []
        read = {b.get("input", {}).get("note_id") for t in turns for b in t.get("content") or []
                if isinstance(b, dict) and b.get("name") == "read_note"}
        # a hit by a name the keywords miss (a brand) is what the agents overlooked: first
        hits.sort(key=lambda h: 0 if unseen is not None and unseen.search(h[2]) else 1)
        for note_id, start, text in hits:
            if note_id not in shown and note_id not in read:
                return [_tool_use("read_note", {"note_id": note_id, "start": max(0, start - 200),
                                                "end": start + len(text) + 200})]
        return []

    def _answer(self, body: dict[str, Any], case: str, seen: list[tuple[str, int, str]],
                terms: list[str]) -> Reply:
        enum = _enum(body)
        yes = next((v for v in enum if v is True or v == "yes"), True)
        no = next((v for v in enum if v is False or v == "no"), False)
        found = _find(seen, terms)
        agents = [json.loads(v) for v in _CANON.findall(case)]
        if found is None:
            answer: Any = "no_info" if "no_info" in enum else no
            reasoning = ("No note shown or read mentions the criterion. The reviewer should "
                         "search the chart once more.")
            pointers: list[dict[str, Any]] = [
                {"note_id": seen[0][0], "what_to_look_for": "criterion terms",
                 "offsets": None}] if seen else []
        else:
            note_id, start, end, sentence, negated = found
            answer = no if negated else yes
            reasoning = (f'Note {note_id} reads "{sentence}". That settles the criterion as '
                         f"{json.dumps(answer)}.")
            pointers = [{"note_id": note_id, "what_to_look_for": "the mention found",
                         "offsets": [start, end]}]
        right = [a == answer for a in agents[:2]] + [False, False]
        correct = {(True, True): "both", (True, False): "agent_a",
                   (False, True): "agent_b"}.get((right[0], right[1]), "neither")
        hint = {"agent_a": "agent_b_error", "agent_b": "agent_a_error"}.get(correct,
                                                                           "true_ambiguity")
        if len(agents) < 2:
            correct, hint = "n_a", "n_a"
        payload = json.dumps({"suggested_answer": answer, "reasoning": reasoning,
                              "evidence_pointers": pointers, "agent_correctness": correct,
                              "classification_hint": hint, "judge_confidence": "medium"})
        structured = ((body.get("output_config") or {}).get("format") or {}).get("schema")
        return Reply.message(text=payload if structured else
                             f"{SENTINELS[0]}{payload}{SENTINELS[1]}")
