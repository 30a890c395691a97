"""``tools.bench.answer_path``: the recorded calls are sorted into our modules (with their
lines and the lines of the functions that ran) and third-party packages."""

from __future__ import annotations

from pathlib import Path

from tools.bench.answer_path import _answers, report


def test_report_counts_our_modules_and_names_the_packages(tmp_path: Path) -> None:
    (tmp_path / "streams").mkdir()
    (tmp_path / "streams" / "a.py").write_text("x\n" * 30)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text("x\n" * 5)
    site = "/v/lib/python3.11/site-packages"
    rows = [(str(tmp_path / "streams" / "a.py"), "f", 3, 7),
            (str(tmp_path / "streams" / "a.py"), "g", 10, 10),
            (str(tmp_path / "streams" / "a.py"), "f", 3, 7),  # the same code object again
            (str(tmp_path / "tests" / "t.py"), "t", 1, 2),  # not a package of ours
            (f"{site}/faust/app.py", "send", 1, 9), (f"{site}/aiokafka/x.py", "y", 1, 2),
            (f"{site}/faust/topics.py", "z", 1, 2), ("/usr/lib/python3.11/asyncio/x.py", "a", 1, 1)]
    got = report(rows, tmp_path)
    assert got["modules"] == 1 and got["lines"] == 30 and got["function_lines"] == 6
    assert got["by_module"] == {"streams/a.py": [30, 6]}
    assert got["third_party"] == {"faust": 2, "aiokafka": 1, "stdlib": 1}


def test_the_measured_cell_yields_a_job() -> None:
    """Two cells: the warm-up agrees, the measured one disagrees (so a job is sent)."""
    import orjson

    recs = [orjson.loads(v) for _, v in _answers("x")]
    assert [r["answer"] for r in recs] == [True, True, True, False]
    assert len({(r["patient_id"], r["field_id"]) for r in recs}) == 2
