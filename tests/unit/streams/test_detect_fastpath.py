"""The fast path's remembered checks (key orders, note ids) give the verdict of a full check,
the first time and every time after."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from streams.detect import fastpath
from streams.detect.fastpath import fast_answer

BASE: dict[str, Any] = {
    "schema_version": 1, "event_id": "e1", "run_id": "r1", "task_id": "t2dm-ckd-v1",
    "patient_id": "P001", "field_id": "t2dm_dx", "agent_id": "default", "answer": True,
    "evidence": [{"note_id": "P001-N04", "quote": "T2DM", "offsets": [1, 5]}],
    "rationale": "r", "confidence": "high", "emitted_at": "2024-05-06T09:00:01Z"}


@pytest.fixture(autouse=True)
def _fresh_caches() -> Iterator[None]:
    """Each test starts and leaves with empty caches (a full one would hide the next
    test's first checks)."""
    fastpath._KEY_ORDERS.clear()
    fastpath._NOTES_OK.clear()
    yield
    fastpath._KEY_ORDERS.clear()
    fastpath._NOTES_OK.clear()


def _without(key: str) -> dict[str, Any]:
    return {k: v for k, v in BASE.items() if k != key}


def _reversed() -> dict[str, Any]:
    return dict(reversed(list(BASE.items())))


def _evidence(item: dict[str, Any]) -> dict[str, Any]:
    return {**BASE, "evidence": [item]}


CASES = [
    ("canonical order", BASE, True),
    ("another order", _reversed(), True),
    ("optional keys left out", _without("rationale"), True),
    ("a required key missing", _without("event_id"), False),
    ("an unknown key", {**BASE, "extra": 1}, False),
    ("evidence keys in another order", _evidence({"offsets": None, "quote": "q",
                                                  "note_id": "P001-N04"}), True),
    ("evidence without offsets", _evidence({"note_id": "P001-N04", "quote": "q"}), True),
    ("an unknown evidence key", _evidence({"note_id": "P001-N04", "quote": "q", "x": 1}), False),
    ("a note id with two dots", _evidence({"note_id": "P001..N04", "quote": "q"}), False),
    ("a note id with a slash", _evidence({"note_id": "a/b", "quote": "q"}), False),
]


@pytest.mark.parametrize(("name", "record", "accepted"), CASES, ids=[c[0] for c in CASES])
def test_the_verdict_is_the_same_from_memory(name: str, record: dict[str, Any],
                                             accepted: bool) -> None:
    for _ in range(3):  # the first check fills the caches, the next ones read them
        assert (fast_answer(dict(record)) is not None) is accepted


def test_a_remembered_good_order_does_not_let_a_bad_record_through() -> None:
    assert fast_answer(dict(BASE)) is not None
    assert fast_answer({**BASE, "event_id": 7}) is None  # same keys, same order, bad value
    assert fast_answer({**BASE, "evidence": [{"note_id": "P001..N04", "quote": "q"}]}) is None


def test_the_remembered_orders_are_bounded_and_only_accepted_ones_are_kept() -> None:
    from itertools import islice, permutations

    for order in islice(permutations(BASE), fastpath._KEY_ORDERS_MAX + 50):
        assert fast_answer({k: BASE[k] for k in order}) is not None
        assert fast_answer({k: BASE[k] for k in order} | {"extra": 1}) is None
    assert 0 < len(fastpath._KEY_ORDERS) <= fastpath._KEY_ORDERS_MAX
    assert all(set(order) <= fastpath._FIELD_SET for order in fastpath._KEY_ORDERS)
