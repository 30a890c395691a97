"""Chart store path safety and the choice of note excerpts within a budget."""

from __future__ import annotations

from pathlib import Path

from agents.context.assemble import gather, windows
from agents.context.charts import ChartStore
from tests.unit.agents.judge.fixtures import NOTES, answer, write_charts


def test_the_store_reads_notes_and_refuses_escaping_ids(tmp_path: Path) -> None:
    store = ChartStore(write_charts(tmp_path))
    (tmp_path / "secret.txt").write_text("x")
    assert store.notes("p001") == NOTES
    assert store.note("p001", "../../secret") is None
    assert store.notes("..") == {} and store.notes("nobody") == {}


def test_cited_notes_come_first_then_missed_notes_by_keyword_hits() -> None:
    answers = [answer("default", True, quotes=(("n03", "empagliflozin"), ("n99", "x")))]
    ctx = gather(answers, ("diabetes",), NOTES, budget=10_000)
    # n02 mentions diabetes twice, n01 and n04 once (ties by note id)
    assert [e.note_id for e in ctx.excerpts] == ["n03", "n02", "n01", "n04"]
    assert [e.cited for e in ctx.excerpts] == [True, False, False, False]
    assert ctx.missing_cited == ("n99",)
    assert all(e.text == NOTES[e.note_id] for e in ctx.excerpts)


def test_long_notes_become_windows_with_true_offsets() -> None:
    note = "x" * 5000 + " Type 2 diabetes mellitus " + "y" * 5000
    answers = [answer("default", True, quotes=(("big", "Type 2 diabetes mellitus"),))]
    ctx = gather(answers, (), {"big": note}, budget=1200)
    assert ctx.chars <= 1200
    ex = ctx.excerpts[0]
    assert note[ex.start:ex.end] == ex.text and "Type 2 diabetes mellitus" in ex.text


def test_windows_merge_and_respect_the_limit() -> None:
    assert windows(100, [5], 200) == [(0, 100)]
    spans = windows(10_000, [100, 150, 9000], 900)
    assert sum(e - s for s, e in spans) <= 900 and len(spans) == 2


def test_a_changed_note_is_read_again(tmp_path: Path) -> None:
    store = ChartStore(write_charts(tmp_path))
    assert store.notes("p001")["n03"] == NOTES["n03"]
    (tmp_path / "charts" / "p001" / "n03.txt").write_text("MEDICATIONS: none.\n")
    (tmp_path / "charts" / "p001" / "n05.txt").write_text("new note\n")
    notes = store.notes("p001")
    assert notes["n03"] == "MEDICATIONS: none.\n" and notes["n05"] == "new note\n"


def test_the_chart_cache_is_bounded_in_characters(tmp_path: Path) -> None:
    """Large charts are evicted least recently used first once the cache holds more than
    cache_chars characters; the patient just read always stays."""
    for p in ("p1", "p2", "p3"):
        (tmp_path / p).mkdir()
        (tmp_path / p / "n1.txt").write_text("x" * 400)
    store = ChartStore(tmp_path, cache_chars=1000)
    for p in ("p1", "p2", "p3"):
        assert len(store.notes(p)["n1"]) == 400
    assert list(store._cache) == ["p2", "p3"] and store._chars == 800
    tiny = ChartStore(tmp_path, cache_chars=100)
    assert tiny.notes("p1") and list(tiny._cache) == ["p1"]
