"""Differential: the compiled detect core (native/, ``judgeflow_native.DetectCore``) against
the Python path (:func:`tests.unit.streams.native_reference.reference_answer`).

For every record of every stream the core returns None ("not mine") or exactly the
reference's step, and None whenever the reference raises. States are driven forward by the
Python path itself (answers and settle/purge ticks), so the core also meets superseded,
decided, settled and dead-lettered cells. The streams: the sample and its malformed records,
the bench's synthetic and core streams, seeded random mutations, three-agent and per-task
agent configurations, the test skills (every answer type), and pools of the values whose
JSON is easy to get wrong (every escape class, Unicode, floats 1e-7..1e17, big integers,
duplicate keys, every UTC-offset spelling, whitespace, compressed and reordered states).
"""

from __future__ import annotations

import math
import random
import struct
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from schemas.skill import Skill, load_skill
from streams.detect.encode import stamp
from streams.detect.faust_edge import bounded
from streams.detect.native import core_config
from streams.detect.processor import DetectProcessor
from streams.detect.state import CellState, DetectConfig
from streams.settings import Settings
from tests.integration.sample import load_sample
from tests.unit.streams.native_reference import reference_answer
from tests.unit.streams.test_detect_differential import mutated
from tools.bench.detect import synthetic_answers
from tools.bench.detect_core import core_stream

native = pytest.importorskip(
    "judgeflow_native", reason="the compiled core is not built (pip install ./native)")

REPO = Path(__file__).parent.parent.parent.parent
TEST_SKILLS = sorted((REPO / "tests" / "data" / "skills").iterdir())
#: (key, value, state transform, topic, partition, offset, now); or a tick:
#: ("tick", key, now)
Record = tuple[Any, ...]


@pytest.fixture(scope="module")
def skill() -> Skill:
    return load_skill(Settings().skill_dir)


def _cfg(agents: tuple[str, ...] = ("default", "skeptical"), threshold: float = 0.5,
         by_task: dict[str, tuple[str, ...]] | None = None) -> DetectConfig:
    return DetectConfig(agents, 30.0, 100.0, threshold, by_task or {})


def _key(value: bytes) -> bytes | None:
    try:
        rec = orjson.loads(value)
        return f"{rec['task_id']}|{rec['patient_id']}|{rec['field_id']}".encode()
    except Exception:
        return None


def _state_variant(raw: bytes, how: str) -> bytes:
    """The same cell stored another way: the core must decline or still be exact."""
    if how == "zlib":
        return zlib.compress(raw, 1)
    if how == "indent":
        return orjson.dumps(orjson.loads(raw), option=orjson.OPT_INDENT_2)
    if how == "sorted":
        return orjson.dumps(orjson.loads(raw), option=orjson.OPT_SORT_KEYS)
    if how in _SPELLED:  # JSON orjson reads alike but would not have written
        old, new = _SPELLED[how]
        return raw.replace(old, new, 1)
    return raw


_SPELLED = {"minus-zero": (b',"partition":0,', b',"partition":-0,'),
            "offset-minus-zero": (b'"offsets":[', b'"offsets":[-0,'),
            "slash": (b'"run_id":"', b'"run_id":"\\/'),
            "letter-escape": (b'"run_id":"', b'"run_id":"\\u0041'),
            "upper-hex": (b'"rationale":"', b'"rationale":"\\u001F'),
            "exponent": (b'"first_seen":1000.0', b'"first_seen":1e3'),
            "space": (b'"answers":{', b'"answers": {')}


class Drive:
    """Feeds records to the core and the reference; keeps the cells as Python stores them."""

    def __init__(self, skill: Skill, cfg: DetectConfig) -> None:
        self.proc = DetectProcessor(skill, cfg)
        self.core = native.DetectCore(core_config(skill, cfg))
        self.states: dict[bytes, bytes] = {}
        self.taken = self.seen = 0
        #: The outcome kinds of the decisions the core took.
        self.outcomes: Counter[str] = Counter()

    def answer(self, key: Any, value: Any, how: str = "", topic: str = "answers",
               partition: int = 0, offset: int = 0, now: float = 1000.0,
               advance: bool = True) -> Any:
        cell = _key(value) if isinstance(value, bytes) else None
        state = self.states.get(cell) if cell is not None else None
        if state is not None and how:
            state = _state_variant(state, how)
        try:
            want = reference_answer(self.proc, key, value, state, topic, partition, offset, now)
        except Exception:  # BadRecord, or a step that is not a new changing answer
            want = None
        got = self.core.answer(key, value, state, topic, partition, offset, now, stamp(now))
        assert got is None or got == want, (value, state, got, want)
        self.seen += 1
        self.taken += got is not None
        if got is not None:
            self.outcomes.update(label for kind, _, label in got[5] if kind == "outcome")
        if advance:
            self._advance(key, value, (topic, partition, offset), now)
        return got

    def _advance(self, key: Any, value: Any, source: tuple[str, int, int], now: float) -> None:
        try:
            answer = self.proc.validate_record(key, value)
            cell = answer.key.encode()
            stored = self.states.get(cell)
            step = self.proc.on_answer(answer, source,
                                       None if stored is None else CellState.loads(stored), now)
            if step.changed and step.state is not None:
                self.states[cell] = bounded(step.state)[1]
        except Exception:  # BadRecord, or what the Faust edge dead-letters as internal_error
            pass

    def tick(self, key: bytes, now: float) -> None:
        stored = self.states.get(key)
        try:
            step = self.proc.on_tick(None if stored is None else CellState.loads(stored),
                                     ("ticks", 0, 0), now)
        except Exception:  # dead-lettered by the Faust edge: the cell stays as it was
            return
        if step.changed:
            if step.state is None:
                self.states.pop(key, None)
            else:
                self.states[key] = bounded(step.state)[1]

    def run(self, values: list[bytes], rng: random.Random, odd_keys: bool = False,
            variants: bool = False) -> Drive:
        now = 1000.0
        for offset, value in enumerate(values):
            now += rng.choice([0.0, 0.25, 1.5, 7.0])
            key: Any = _key(value)
            if odd_keys and rng.random() < 0.05:
                key = rng.choice([None, b"", b"x|y|z", (key or b"") + b" ", "str-key"])
            how = rng.choice(["zlib", "indent", "sorted", "", "", ""]) if variants else ""
            self.answer(key, value, how, offset=offset, now=now)
            if rng.random() < 0.04:  # the same event again at another offset
                self.answer(key, value, offset=offset + 100000, now=now)
            if key is not None and isinstance(key, bytes) and rng.random() < 0.03:
                self.tick(key, now + rng.choice([1.0, 31.0, 200.0]))
        return self


def test_sample_and_malformed(skill: Skill) -> None:
    sample = load_sample()
    values = [v for _, v in sample.answers] + sample.malformed
    d = Drive(skill, _cfg()).run(values, random.Random(1), odd_keys=True, variants=True)
    assert d.taken > 0.5 * len(sample.answers), (d.taken, d.seen)


def test_synthetic_and_core_streams(skill: Skill) -> None:
    synthetic = [v for _, v in synthetic_answers(Settings(), 4000)]
    d = Drive(skill, _cfg()).run(synthetic, random.Random(2))
    assert d.taken > 0.9 * len(synthetic)
    stream = core_stream(4000)
    d = Drive(skill, _cfg()).run(stream, random.Random(3), odd_keys=True)
    assert d.taken > 0.85 * len(stream)


def test_random_mutations(skill: Skill) -> None:
    rng = random.Random(10)
    values = mutated(rng, 4000)
    values += [v for _, v in load_sample().answers]
    rng.shuffle(values)
    d = Drive(skill, _cfg()).run(values, rng, odd_keys=True, variants=True)
    assert d.taken > 300, (d.taken, d.seen)


def _with_agent(rec: dict[str, Any], agent: str, **over: Any) -> bytes:
    return orjson.dumps({**rec, "agent_id": agent, "event_id": f"{rec['event_id']}-{agent}",
                         "run_id": f"run-{agent}", **over})


def test_agent_configurations(skill: Skill) -> None:
    """Three agents, agents in another order than they answer, per-task agent sets (a
    one-agent task is decided on its first answer), an agent nobody expects, and
    thresholds on the confidences' own values."""
    rng = random.Random(5)
    base = [orjson.loads(v) for _, v in load_sample().answers]
    trio: list[bytes] = []
    for rec in base:
        trio.append(orjson.dumps(rec))
        if rec["agent_id"] == "default":
            trio.append(_with_agent(rec, "third", answer=rng.choice(
                [rec["answer"], True, "no", None, "no_info"])))
        if rng.random() < 0.05:
            trio.append(_with_agent(rec, "stranger"))
    for cfg in (_cfg(("default", "skeptical", "third")), _cfg(("third", "skeptical", "default")),
                _cfg(("skeptical", "default"), threshold=0.95),
                _cfg(by_task={"t2dm-ckd-v1": ("default",)}),
                _cfg(by_task={"t2dm-ckd-v1": ("skeptical", "third", "default"),
                              "other": ("default",)})):
        d = Drive(skill, cfg).run(trio, random.Random(6))
        assert d.taken > 0.3 * len(trio), (cfg, d.taken, d.seen)
    d = Drive(skill, _cfg(("default", "default"))).run(trio[:200], random.Random(7))
    assert d.taken == 0  # an agent listed twice: Python's ranking is not mirrored


_RAW: list[Any] = [
        True, False, None, 0, 1, 2, -1, 0.0, 1.0, -0.0, 7.4, 7.40001, 7.1234567, 1e-5, 1e-7,
        1e16, 1e15, 123456.5, 2**53, 2**53 + 1, 2**63 - 1, 2**63, 2**64 - 1, -2**63, "yes",
        "Yes ", " no", "No", "y", "n", "true", "FALSE", "present", "absent", "positive", "1",
        "0", "no_info", "No Info",
        "unknown", "n/a", "NA", "", "  ", "maybe", "6.9%", "7.7 %", " 7.1 ", "+5", "-0",
        "1,234.5", "77 mL/min/1.73m2", "77 ml/MIN/1.73 M2", "5 mg", "1e3", ".5", "5.", "1.",
        "2006-11-13", " 2006-11-13 ", "2006-1-13", "2006/11/13", "11/13/2006", "13/11/2006",
        "2006-02-30", "2004-02-29", "1900-02-29", "0000-01-01", "July 21, 2006",
        "12 June 1995", "20061113", "2006-11-13T00:00:00", "type_2", "TYPE_2", "G3a", "g3A",
        "HFrEF", "hfref", "3a", "3A", " HFpEF", [], ["metformin"], ["Metformin", "metformin "],
        ["metformin", "dapagliflozin"], ["dapagliflozin", "metformin", "metformin"],
        ["x  y", "X Y"], ["", " "], [True, "true"], [1], [None], [[]], {"a": 1}, "é", "café",
        "tab\there", 'quote"s', "back\\slash", "\x1b[0m", "\u2028", "emoji 😀", "\x7f", "a;b",
        "\u039a", "\u0130", "\u212a"]  # Greek Kappa, dotted I, Kelvin sign
_CONF = ["low", "medium", "high", 0.1, 0.49, 0.5, 0.51, 0.95, 1.0, 0.0, -0.0, 1e-7,
         0.3333333333333333, 1, True, "LOW", None]
_STAMPS = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00-00:00",
           "2026-01-01T00:00:00.1Z", "2026-01-01T00:00:00.000000+00:00",
           "2026-01-01T00:00:00.123456-00:00", "2026-01-01T00:00:00.1234567Z",
           "2026-01-01T00:00:00+05:30", "2026-01-01T00:00:00-23:59", "2026-02-29T00:00:00Z",
           "2024-02-29T23:59:59.999999Z", "2026-01-01T24:00:00Z", "2026-01-01 00:00:00Z",
           "2026-01-01T00:00:00", "0001-01-01T00:00:00Z", "2026-01-01T00:00:00.Z",
           "\u0662026-01-01T00:00:00Z"]
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


def _valid(kind: str, enum: list[str], rng: random.Random) -> Any:
    """An answer the schema accepts, in one of its spellings."""
    pool = list(_VALID.get(kind, []))
    if enum:
        pool += enum + [v.upper() for v in enum] + [f" {v} " for v in enum]
        if kind == "list":
            pool += [rng.sample(enum, min(len(enum), 2)), [enum[0], enum[0].upper()]]
    return rng.choice(pool)


def _typed_values(skill: Skill, rng: random.Random, cells: int) -> list[bytes]:
    """Two agents per cell over every criterion of ``skill``: answers from the pool and the
    criterion's own enum values, the other fields mostly plain, sometimes from their pools."""
    def pick(plain: Any, pool: list[Any], odd: float = 0.2) -> Any:
        return rng.choice(pool) if rng.random() < odd else plain

    out = []
    fields = sorted(skill.criteria)
    for i in range(cells):
        field = fields[i % len(fields)]
        enum = [v for v in skill.criteria[field].answer_schema.enum or [] if type(v) is str]
        for agent in ("default", "skeptical"):
            quote = rng.choice(_TEXT)
            rec: dict[str, Any] = {
                "schema_version": pick(1, [2, 2**40, 2**63]),
                "event_id": f"e{i}-{agent}", "run_id": pick("r1", ["r-é", "r" * 201, ""], 0.05),
                "task_id": "t", "patient_id": f"P{i:05d}", "field_id": field, "agent_id": agent,
                "answer": rng.choice(_RAW) if rng.random() < 0.3 else _valid(
                    skill.criteria[field].answer_schema.type, enum, rng),
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


def _skills() -> Iterator[Skill]:
    yield load_skill(Settings().skill_dir)
    for path in TEST_SKILLS:
        yield load_skill(path)


def test_every_answer_type_and_tricky_json() -> None:
    for n, sk in enumerate(_skills()):
        for threshold in (0.5, 0.95):
            values = _typed_values(sk, random.Random(20 + n), 1500)
            d = Drive(sk, _cfg(threshold=threshold)).run(values, random.Random(n),
                                                         variants=True)
            assert d.taken > 100, (sk.name, d.taken, d.seen)
            assert set(d.outcomes) == {"agreement", "disagreement", "type_drift",
                                       "low_confidence"}, d.outcomes


def test_duplicate_keys_whitespace_and_odd_sources(skill: Skill) -> None:
    rng = random.Random(30)
    d = Drive(skill, _cfg())
    for i, (_, value) in enumerate(load_sample().answers[:300]):
        key = _key(value)
        body = value[1:]
        for variant in (b'{"answer":"no",' + body, b'{"agent_id":"x",' + body,
                        value[:-1] + b',"confidence":"low"}', value.replace(b'":', b'": '),
                        b" " + value + b"\n", value.replace(b'"offsets":[', b'"offsets":[ ')):
            d.answer(key, variant, offset=i, advance=False)
        d.answer(key, value, topic=rng.choice(["answers", 'a"b', "ünï", "t\x01", "\ud800"]),
                 partition=rng.choice([0, 7, -1, 2**63, True]),
                 offset=rng.choice([i, 2**62, 2**64, -5]), now=rng.choice(
                     [1000.0, 1764625321.123456, 1e-7, 0.1, -1.5, 253402300799.0]))
    assert d.taken > 300


def test_stored_cells_of_other_forms(skill: Skill) -> None:
    """States the core declines must be declined, not misread: zlib, any other layout."""
    d = Drive(skill, _cfg())
    answers = load_sample().answers
    firsts: dict[bytes, bytes] = {}
    for key, value in answers:
        firsts.setdefault(key, value)
    for key, value in answers:
        if firsts[key] is value:
            d.answer(key, value)
    for key, value in answers:
        if firsts[key] is not value:
            stored = d.states.get(key)
            assert stored is not None
            for how in ("zlib", "indent", "sorted", *_SPELLED):
                variant = _state_variant(stored, how)
                got = d.core.answer(key, value, variant, "answers", 0, 1, 1000.0, stamp(1000.0))
                assert got is None or got == reference_answer(d.proc, key, value, variant,
                                                              "answers", 0, 1, 1000.0)


def test_core_stream_is_taken() -> None:
    """The benchmark's stream, fed in order: at least 99% of it takes the compiled path."""
    d = Drive(load_skill(Settings().skill_dir), _cfg())
    stream = core_stream(4000)
    for offset, value in enumerate(stream):
        d.answer(_key(value), value, offset=offset, now=1000.0 + offset // 2000)
    assert d.taken >= 0.99 * len(stream), (d.taken, len(stream))


def _random_float(rng: random.Random) -> float:
    """Any magnitude, short decimals, and arbitrary bit patterns."""
    kind = rng.random()
    if kind < 0.6:
        return rng.uniform(-1, 1) * 10 ** rng.uniform(-8, 18)
    if kind < 0.8:
        return round(rng.uniform(-1e6, 1e6), rng.randint(0, 8))
    x = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
    return x if math.isfinite(x) else 0.5


def test_float_writer_matches_orjson() -> None:
    rng = random.Random(40)
    written = 0
    for _ in range(50000):
        x = _random_float(rng)
        got = native._float_json(x)
        assert got is None or got == orjson.dumps(x).decode(), x
        if 1e-4 <= abs(x) < 1e15 or x == 0.0:
            assert got is not None, x  # no exponent in orjson's spelling: written
        written += got is not None
    assert written > 30000


def _random_text(rng: random.Random) -> str:
    pools = [range(0, 0x20), range(0x20, 0x7f), range(0x7f, 0x100), range(0x100, 0xd800),
             range(0xe000, 0x10000), range(0x10000, 0x110000)]
    return "".join(chr(rng.choice(rng.choice(pools))) for _ in range(rng.randint(0, 12)))


def test_json_reader_and_writer_match_orjson() -> None:
    """Read what orjson wrote (or hand-spelled variants) and write it back: orjson's bytes,
    or None."""
    rng = random.Random(41)
    taken = 0
    for _ in range(20000):
        value = {_random_text(rng): [_random_text(rng), rng.choice(
            [None, True, rng.randint(-2**63, 2**63 - 1), _random_float(rng)])]}
        raw = orjson.dumps(value)
        spelled = rng.choice([raw, raw.replace(b":", b": "), raw.replace(b"\\n", b"\\u000a"),
                              raw.replace(b"/", b"\\/"), raw + b" ", raw.replace(b"]", b",]")])
        try:
            want = orjson.dumps(orjson.loads(spelled))
        except orjson.JSONDecodeError:
            want = None
        got = native._roundtrip(spelled)
        assert got is None or got == want, spelled
        taken += got is not None
    assert taken > 5000
    for bad in (b'{"a":1,"a":2}', b'"\\ud800"', b"\xff", b"1e5", b"[1.50]", b"NaN",
                b"18446744073709551616", b"[" * 100 + b"]" * 100):
        assert native._roundtrip(bad) is None, bad


def test_a_schema_the_core_cannot_read_only_turns_off_its_criterion(skill: Skill) -> None:
    """(One expected agent: every answer is decided, which needs the schema.)"""
    config = orjson.loads(core_config(skill, _cfg(("default",))))
    config["criteria"]["t2dm_dx"]["type"] = "traffic_light"
    core = native.DetectCore(orjson.dumps(config))
    got = {field: 0 for field in config["criteria"]}
    for key, value in load_sample().answers:
        if b'"agent_id":"default"' not in value:
            continue
        field = key.split(b"|")[2].decode()
        got[field] += core.answer(key, value, None, "answers", 0, 0, 1000.0, "x") is not None
    assert got["t2dm_dx"] == 0 and sum(got.values()) > 250, got
    with pytest.raises(ValueError, match="unreadable configuration"):
        native.DetectCore(b"{}")


def test_every_pair_of_spellings_per_answer_type() -> None:
    """For one criterion of each answer type of each skill: a cell for every pair of
    answers from the type's spellings (plain records otherwise), so every spelling meets
    every other in a decision."""
    for sk in _skills():
        by_type: dict[str, str] = {}
        for field, criterion in sorted(sk.criteria.items()):
            by_type.setdefault(criterion.answer_schema.type, field)
        values, rng = [], random.Random(50)
        for kind, field in sorted(by_type.items()):
            enum = [v for v in sk.criteria[field].answer_schema.enum or [] if type(v) is str]
            pool = [*_VALID.get(kind, []), *enum, *(v.upper() for v in enum),
                    *rng.sample(_RAW, 8)]
            for i, (a, b) in enumerate((a, b) for a in pool for b in pool):
                for agent, answer in (("default", a), ("skeptical", b)):
                    values.append(orjson.dumps({
                        "event_id": f"{field}-{i}-{agent}", "run_id": "r", "task_id": "t",
                        "patient_id": f"P{i}", "field_id": field, "agent_id": agent,
                        "answer": answer, "confidence": 0.9,
                        "emitted_at": "2026-01-01T00:00:00Z"}))
        d = Drive(sk, _cfg())
        for offset, value in enumerate(values):
            d.answer(_key(value), value, offset=offset)
        assert d.taken > 0.6 * len(values), (sk.name, d.taken, d.seen)


def test_answers_nested_past_the_depth_bound_are_declined(skill: Skill) -> None:
    """``check_json_value`` refuses a list or dict answer nested deeper than MAX_JSON_DEPTH
    (a schema error): the core must decline it, also on a step that leaves the cell pending
    (a reviewer found it taken and stored, and the later job then failed JudgeJob)."""
    from schemas.chart_review import MAX_JSON_DEPTH

    d = Drive(skill, _cfg())
    rec = orjson.loads(load_sample().answers[0][1])
    taken = {}
    for depth in range(MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH + 4):
        for opener, closer, leaf in ((b"[", b"]", b"1"), (b'{"a":', b"}", b"1"),
                                     (b"[", b"]", b"[]"), (b'{"a":', b"}", b"{}")):
            inner = opener * (depth - 1) + leaf + closer * (depth - 1)
            value = orjson.dumps({**rec, "event_id": f"deep-{depth}-{opener!r}"})
            value = value.replace(orjson.dumps(rec["answer"]), inner, 1)
            got = d.answer(_key(value), value, advance=False)
            taken[(depth, opener, leaf)] = got is not None
    # within the bound the core may take it; past it, never (Drive checks equality)
    assert not any(t for (depth, _, leaf), t in taken.items()
                   if depth - 1 + (leaf in (b"[]", b"{}")) > MAX_JSON_DEPTH)
    assert any(taken.values())
