"""The detector's expected outputs, recorded: record streams, how they are run, and the golden
files under ``golden/`` that hold what detect did with them.

The goldens were recorded from main at 536eeda (before the fast path and the compiled core
were removed), so they pin the behaviour every later refactor must keep: every step's note,
dead-letter type and message, the bytes of every output record and of the stored cell.
Re-recorded once since, when detect took the shared decoder (:mod:`streams.decode`): only
dead-letter messages changed (``not a JSON AgentAnswer: ...``, ``N error(s): ...``), no
type, output or cell.
Steps are kept as digests (the streams are long); the sample's outputs are also kept in full
(``golden/sample_outputs.jsonl``) so that a reader sees what detect emits.

Re-record (only for a deliberate change of semantics, said in the commit)::

    python -m tests.unit.streams.detect_golden
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from schemas.skill import Skill, load_skill
from streams.detect.processor import DetectProcessor
from streams.detect.state import DetectConfig
from streams.errors import BadRecord
from streams.settings import Settings
from tests.integration.sample import load_sample
from tools.bench.detect import synthetic_answers

GOLDEN = Path(__file__).parent / "golden"
REPO = Path(__file__).parent.parent.parent.parent
TEST_SKILLS = sorted((REPO / "tests" / "data" / "skills").iterdir())
Record = tuple[str, bytes | None, bytes | None]  # topic, key, value
Stream = list[tuple[Record, float]]


def cfg(settle: float = 30.0, agents: tuple[str, ...] | None = None, threshold: float | None = None,
        by_task: dict[str, tuple[str, ...]] | None = None) -> DetectConfig:
    s = Settings()
    return DetectConfig(agents or s.expected_agents, settle, 100.0,
                        s.low_confidence_threshold if threshold is None else threshold,
                        by_task or {})


def run_one(proc: DetectProcessor, states: dict[bytes, Any], rec: Record, offset: int,
            now: float) -> tuple[Any, ...]:
    """One step as the Faust edge takes it; ``states`` holds the cells between steps."""
    topic, key, value = rec
    source = (topic, 0, offset)
    try:
        if topic == "ticks":
            assert key is not None
            step = proc.on_tick(states.get(key), source, now)
        else:
            answer = proc.validate(value)
            key = answer.key.encode()
            step = proc.on_answer(answer, source, states.get(key), now)
    except BadRecord as exc:
        return ("dlq", exc.error_type, exc.message)
    except Exception as exc:
        return ("dlq", "internal_error", f"{type(exc).__name__}: {exc}")
    if step.changed:
        states[key] = step.state
    state = states.get(key)
    return ("ok", str(step.note), step.changed, [(e.kind, e.key, e.value) for e in step.emits],
            None if state is None else state.dumps())


def steps(skill: Skill, records: Stream, config: DetectConfig) -> Iterator[tuple[Any, ...]]:
    proc = DetectProcessor(skill, config)
    states: dict[bytes, Any] = {}
    for offset, (rec, now) in enumerate(records):
        yield run_one(proc, states, rec, offset, now)


def digest_line(step: tuple[Any, ...]) -> list[Any]:
    """A step as one golden line: dead letters in full, the rest as a digest of the outputs'
    and the cell's bytes."""
    if step[0] == "dlq":
        return list(step)
    _, note, changed, emits, state = step
    h = hashlib.sha256()
    for kind, key, value in emits:
        h.update(f"{kind}\0{len(key)}\0{len(value)}\0".encode() + key + value)
    h.update(b"\0state\0" + (b"-" if state is None else state))
    return [note, changed, len(emits), h.hexdigest()[:20]]


# --- the record streams ------------------------------------------------------------------

def with_ticks(values: list[bytes], rng: random.Random, t0: float = 1000.0) -> Stream:
    """Answers in order, with duplicates at other offsets and early ticks, then a settle tick
    and a purge tick for every key at the end."""
    out: Stream = []
    keys: list[bytes] = []
    now = t0
    for value in values:
        now += rng.random()
        out.append((("answers", None, value), now))
        try:
            rec = orjson.loads(value)
            keys.append(f"{rec['task_id']}|{rec['patient_id']}|{rec['field_id']}".encode())
        except Exception:
            pass
        if rng.random() < 0.05:  # a duplicate event id at another offset
            out.append((("answers", None, value), now))
        if keys and rng.random() < 0.05:  # an early tick
            out.append((("ticks", rng.choice(keys), b""), now))
    for key in dict.fromkeys(keys):
        out.append((("ticks", key, b""), now + 31))
    for key in dict.fromkeys(keys):
        out.append((("ticks", key, b""), now + 200))
    return out


def with_reruns(rng: random.Random) -> list[bytes]:
    """The sample's answers, about a third of them followed by a later run of the same agent
    with another answer."""
    values = []
    for rec in (orjson.loads(v) for _, v in load_sample().answers):
        values.append(orjson.dumps(rec))
        if rng.random() < 0.3:
            values.append(orjson.dumps({**rec, "event_id": rec["event_id"] + "-r2",
                                        "run_id": "zz-rerun", "answer": rng.choice(
                                            [True, "no", "unknown", 3, None, ["a"]])}))
    return values


_STAMPS = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00.5Z",
           "2026-01-01T00:00:00.1234567Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00",
           "2026-01-01T00:00:00-05:30", "2026-13-01T00:00:00Z", "2026-01-01T25:00:00Z",
           "2026-01-01", 1767225600, "2026-01-01T00:00:00+24:00", "", "2026-01-01T00:00Z",
           "2026-01-01T00:00:00.000000+00:00", "2026-01-01T00:00:00-00:00",
           "2026-01-01T00:00:00.123456-00:00", "2026-01-01T00:00:00-23:59",
           "2024-02-29T23:59:59.999999Z", "2026-01-01T24:00:00Z", "0001-01-01T00:00:00Z",
           "2026-01-01T00:00:00.Z", "\u0662026-01-01T00:00:00Z"]
_ODD = [None, True, False, 0, 1, -1, 0.0, 0.5, 1.0, 1.5, -0.0, "", "x", "low", "LOW", "0.2",
        "medium", "high", [], [1], {}, {"a": 1}, "é", "a" * 201, "a/b", "..", "a..b", ".a",
        "ok-id_1.2", [{"note_id": "n1", "quote": "q"}], [{"note_id": "n1", "quote": "q",
                                                          "offsets": [3, 1]}], 2**40, "a" * 200,
        [{"note_id": "n1", "quote": "q", "offsets": [1, 3]}],
        [{"note_id": "n1", "quote": "q", "offsets": [0, 0]}, {"note_id": "n2", "quote": ""}],
        [{"note_id": "n1", "quote": "q", "offsets": [True, 3]}],
        [{"note_id": "n1", "quote": "q", "offsets": [1.0, 3]}],
        [{"note_id": "n1", "quote": "q", "offsets": [1, 2, 3]}],
        [{"note_id": "n1", "quote": "q", "offsets": None}],
        [{"note_id": "n1", "quote": "q", "offsets": [-1, 3]}],
        [{"note_id": "../x", "quote": "q"}], [{"note_id": "n1", "quote": 3}],
        [{"note_id": "n1", "quote": "q", "page": 2}], [{"quote": "q"}], ["n1"], [None]]


def _mutate(rec: dict[str, Any], rng: random.Random) -> bytes:
    rec = dict(rec)
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        name = rng.choice([*rec.keys(), "evidence", "rationale", "schema_version",
                           "low_confidence_reason", "confidence", "extra"])
        if op < 0.15:
            rec.pop(name, None)
        elif op < 0.35:
            rec["emitted_at"] = rng.choice(_STAMPS)
        elif op < 0.5:
            rec["confidence"] = rng.choice([*_ODD, 0.2, 0.49, 0.5, 0.51])
        else:
            rec[name] = rng.choice(_ODD)
    if rng.random() < 0.03:
        return rng.choice([b"", b"[]", b"null", b"{", b'"x"', b"\xff", b"[" * 300,
                           b'{"a":' * 70 + b"1" + b"}" * 70])
    return orjson.dumps(rec)


def mutated(rng: random.Random, n: int) -> list[bytes]:
    """``n`` seeded mutations of the sample's answers (see :func:`_mutate`)."""
    base = [orjson.loads(v) for _, v in load_sample().answers]
    return [_mutate(rng.choice(base), rng) for _ in range(n)]


def spelled(values: list[bytes]) -> list[bytes]:
    """The same records written otherwise: duplicate keys, whitespace, reordered keys."""
    out = []
    for value in values:
        body = value[1:]
        out += [b'{"answer":"no",' + body, value[:-1] + b',"confidence":"low"}',
                value.replace(b'":', b'": '), b" " + value + b"\n",
                orjson.dumps(orjson.loads(value), option=orjson.OPT_SORT_KEYS)]
    return out


_RAW: list[Any] = [
    True, False, None, 0, 1, 2, -1, 0.0, 1.0, -0.0, 7.4, 7.40001, 7.1234567, 1e-5, 1e-7,
    1e16, 1e15, 123456.5, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, -2**63, "yes",
    "Yes ", " no", "No", "y", "n", "true", "FALSE", "present", "absent", "positive", "1",
    "0", "no_info", "No Info", "unknown", "n/a", "NA", "", "  ", "maybe", "6.9%", "7.7 %",
    " 7.1 ", "+5", "-0", "1,234.5", "77 mL/min/1.73m2", "77 ml/MIN/1.73 M2", "5 mg", "1e3",
    ".5", "5.", "1.", "2006-11-13", " 2006-11-13 ", "2006-1-13", "2006/11/13", "11/13/2006",
    "13/11/2006", "2006-02-30", "2004-02-29", "1900-02-29", "0000-01-01", "July 21, 2006",
    "12 June 1995", "20061113", "2006-11-13T00:00:00", "type_2", "TYPE_2", "G3a", "g3A",
    "HFrEF", "hfref", "3a", "3A", " HFpEF", [], ["metformin"], ["Metformin", "metformin "],
    ["metformin", "dapagliflozin"], ["dapagliflozin", "metformin", "metformin"],
    ["x  y", "X Y"], ["", " "], [True, "true"], [1], [None], [[]], {"a": 1}, "é", "café",
    "tab\there", 'quote"s', "back\\slash", "\x1b[0m", "\u2028", "emoji 😀", "\x7f", "a;b",
    "\u039a", "\u0130", "\u212a"]
_CONF = ["low", "medium", "high", 0.1, 0.49, 0.5, 0.51, 0.95, 1.0, 0.0, -0.0, 1e-7,
         0.3333333333333333, 1, True, "LOW", None]
_TEXT = ["", "plain", "line\nbreak", "tab\t", "\x00\x01\x08\x0c\x1f", "\x7f", 'q" b\\ s/',
         "é ü 中文 😀", "\u2028\u2029", "\ud7ff\ue000\uffff", "r" * 2000, "r" * 2001]
_VALID: dict[str, list[Any]] = {
    "boolean": [True, False, "yes", "No", "true", 1, 0, 1.0, "present", " y ", "no_info", None,
                "negative", "ABSENT", "Positive", "N", "0", "1", "FALSE"],
    "number": [7, 7.4, "7.4", "6.9%", "7.4 %", 80, 80.0, "80", "-0", "1,234.5", "no_info", None],
    "date": ["2006-11-13", "2006/11/13", "11/13/2006", "2004-02-29", " 2006-11-13", None,
             "July 21, 2006", "12 june  1995", "Sep 6, 2012", "June 06 2012", "Jun 6 2012",
             "31 June 1995", "6 june, 1995", "1 MAY 2000", "May 1, 2000", "29 Feb 2001"],
    "string": ["Hello  World", "hello world", " x", "no_info"],
    "list": [[], ["metformin"], ["metformin", "dapagliflozin"], ["Dapagliflozin", "metformin"],
             ["x  y", "X Y"], ["a", "b"], "no_info"],
}


def typed_values(skill: Skill, rng: random.Random, cells: int) -> list[bytes]:
    """Two agents per cell over every criterion of ``skill``: answers of every type in many
    spellings, the other fields mostly plain, sometimes odd."""
    def pick(plain: Any, pool: list[Any], odd: float = 0.2) -> Any:
        return rng.choice(pool) if rng.random() < odd else plain

    out = []
    fields = sorted(skill.criteria)
    for i in range(cells):
        field = fields[i % len(fields)]
        schema = skill.criteria[field].answer_schema
        enum = [v for v in schema.enum or [] if type(v) is str]
        pool = list(_VALID.get(schema.type, []))
        if enum:
            pool += enum + [v.upper() for v in enum] + [f" {v} " for v in enum]
            if schema.type == "list":
                pool += [rng.sample(enum, min(len(enum), 2)), [enum[0], enum[0].upper()]]
        for agent in ("default", "skeptical"):
            quote = rng.choice(_TEXT)
            rec: dict[str, Any] = {
                "schema_version": pick(1, [2, 2**40, 2**63]),
                "event_id": f"e{i}-{agent}", "run_id": pick("r1", ["r-é", "r" * 201, ""], 0.05),
                "task_id": "t", "patient_id": f"P{i:05d}", "field_id": field, "agent_id": agent,
                "answer": rng.choice(_RAW) if rng.random() < 0.3 else rng.choice(pool),
                "evidence": rng.choice([[], [{"note_id": "N1", "quote": quote,
                                              "offsets": [0, 5]}],
                                        [{"quote": quote, "note_id": "N-2.a"}]]),
                "rationale": pick("why", [*_TEXT, "r" * 8001], 0.5),
                "confidence": pick(rng.choice(["high", 0.9, "low", 0.2]), _CONF, 0.3),
                "emitted_at": pick("2026-01-01T00:00:00.5Z", _STAMPS, 0.3),
            }
            if rng.random() < 0.2:
                rec["low_confidence_reason"] = rng.choice([*_TEXT, None])
            for name in rng.sample(["evidence", "rationale", "confidence", "schema_version"],
                                   rng.randint(0, 2)):
                rec.pop(name)
            out.append(orjson.dumps(rec))
    return out


def trio(rng: random.Random) -> list[bytes]:
    """The sample with a third agent answering after ``default``, and a few unexpected agents."""
    out: list[bytes] = []
    for rec in (orjson.loads(v) for _, v in load_sample().answers):
        out.append(orjson.dumps(rec))
        if rec["agent_id"] == "default":
            out.append(orjson.dumps({**rec, "agent_id": "third", "event_id":
                                     f"{rec['event_id']}-third", "run_id": "run-third",
                                     "answer": rng.choice([rec["answer"], True, "no", None])}))
        if rng.random() < 0.05:
            out.append(orjson.dumps({**rec, "agent_id": "stranger", "event_id":
                                     f"{rec['event_id']}-stranger", "run_id": "run-x"}))
    return out


def _main_skill() -> Skill:
    return load_skill(Settings().skill_dir)


def streams() -> Iterator[tuple[str, Callable[[], Skill], Stream, DetectConfig]]:
    """Every golden stream: (name, its skill, its records, its configuration)."""
    sample = load_sample()
    yield ("sample", _main_skill,
           with_ticks([v for _, v in sample.answers] + sample.malformed, random.Random(1)),
           cfg())
    yield ("synthetic", _main_skill,
           with_ticks([v for _, v in synthetic_answers(Settings(), 2000)], random.Random(2)),
           cfg())
    rng = random.Random(3)
    values = with_reruns(rng)
    rng.shuffle(values)
    yield ("reruns", _main_skill, with_ticks(values[: len(values) // 2], rng), cfg(settle=0.5))
    rng = random.Random(10)
    values = mutated(rng, 3000) + [v for _, v in sample.answers]
    rng.shuffle(values)
    yield ("mutations", _main_skill, with_ticks(values, rng), cfg())
    yield ("spelled", _main_skill,
           with_ticks(spelled([v for _, v in sample.answers[:200]]), random.Random(30)), cfg())
    for n, path in enumerate([None, *TEST_SKILLS]):
        name = "main" if path is None else path.name

        def load(path: Path | None = path) -> Skill:
            return _main_skill() if path is None else load_skill(path)
        values = typed_values(load(), random.Random(20 + n), 600)
        for threshold in (0.5, 0.95):
            yield (f"typed-{name}-{threshold}", load, with_ticks(values, random.Random(n)),
                   cfg(threshold=threshold))
    values = trio(random.Random(5))
    for label, config in (
            ("three", cfg(agents=("default", "skeptical", "third"))),
            ("reordered", cfg(agents=("third", "skeptical", "default"))),
            ("threshold", cfg(agents=("skeptical", "default"), threshold=0.95)),
            ("by-task", cfg(by_task={"t2dm-ckd-v1": ("default",)})),
            ("twice", cfg(agents=("default", "default")))):
        yield f"agents-{label}", _main_skill, with_ticks(values, random.Random(6)), config


def golden_lines(name: str) -> list[list[Any]]:
    return [json.loads(line) for line in (GOLDEN / f"{name}.jsonl").read_text().splitlines()]


def sample_outputs(skill: Skill) -> list[Any]:
    """Every record the sample stream emits, decoded, in order."""
    _, _, records, config = next(streams())
    return [[kind, key.decode(), orjson.loads(value)]
            for step in steps(skill, records, config) if step[0] == "ok"
            for kind, key, value in step[3]]


def record() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for name, load, records, config in streams():
        lines = [json.dumps(digest_line(s), ensure_ascii=False)
                 for s in steps(load(), records, config)]
        (GOLDEN / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        print(f"{name}: {len(lines)} steps")
    out = [json.dumps(r, ensure_ascii=False) for r in sample_outputs(_main_skill())]
    (GOLDEN / "sample_outputs.jsonl").write_text("\n".join(out) + "\n")


if __name__ == "__main__":
    record()
    sys.exit(0)
