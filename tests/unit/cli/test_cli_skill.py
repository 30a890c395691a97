"""``judgeflow skill check`` on our sample and on two foreign skill folders (in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main
from streams.sampledata import DATA_DIR

FOREIGN = Path(__file__).resolve().parents[2] / "data" / "skills"


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["skill", "check", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_our_sample_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(capsys, str(DATA_DIR / "skill"))
    assert code == 0
    header = out.splitlines()[0].split()
    assert header[:2] == ["criterion", "answer"] and header[-1] == "problems"
    assert "ckd_stage" in out and "ckd_dx = true" in out
    assert out.splitlines()[-1] == "skill: 13 usable, 0 unusable, 0 warning(s)"


@pytest.mark.parametrize(("folder", "broken", "good"), [
    ("renal_yaml", "uacr_band", {"ckd_present", "ckd_stage", "dialysis", "egfr", "renal_meds"}),
    ("cardio_json", "nyha_class", {"hf_dx", "hf_type", "lvef", "hf_meds", "last_echo"}),
])
def test_foreign_folders_table_and_json(capsys: pytest.CaptureFixture[str], folder: str,
                                        broken: str, good: set[str]) -> None:
    code, out, _ = check(capsys, str(FOREIGN / folder))
    assert code == 1  # one file is broken on purpose
    rows = {line.split()[0]: line for line in out.splitlines()[1:-1]}
    assert set(rows) == good | {broken}
    assert "ERROR" in rows[broken] and all("ERROR" not in rows[g] for g in good)
    code, out, _ = check(capsys, str(FOREIGN / folder), "--json")
    assert code == 1
    report = json.loads(out)
    by_id = {r["criterion"]: r for r in report["criteria"]}
    assert report["ok"] is False and by_id[broken]["problems"]
    assert {c for c, r in by_id.items() if not r["problems"]} == good
    assert report["warnings"], "each foreign folder carries keys we do not know"


def test_foreign_shapes_are_read_as_meant(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = check(capsys, str(FOREIGN / "renal_yaml"), "--json")
    renal = {r["criterion"]: r for r in json.loads(out)["criteria"]}
    assert renal["dialysis"]["gate"] == {"field_id": "ckd_stage", "values": ["4", "5"]}
    assert renal["ckd_stage"]["enum"] == ["1", "2", "3a", "3b", "4", "5"]
    assert renal["renal_meds"]["open_list"] and renal["egfr"]["unit"] == "mL/min/1.73m2"
    _, out, _ = check(capsys, str(FOREIGN / "cardio_json"), "--json")
    cardio = {r["criterion"]: r for r in json.loads(out)["criteria"]}
    assert cardio["hf_type"]["gate"] == {"field_id": "hf_dx", "values": [True]}
    assert cardio["hf_meds"]["open_list"] and cardio["last_echo"]["answer_type"] == "date"
    assert cardio["lvef"]["unit"] == "%"


def test_strict_fails_on_warnings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    crit = tmp_path / "criteria" / "c.yaml"
    crit.parent.mkdir()
    crit.write_text("id: c\nquestion: q\nschema: {type: boolean}\nowner: x\n")
    assert check(capsys, str(tmp_path))[0] == 0
    assert check(capsys, str(tmp_path), "--strict")[0] == 1


@pytest.mark.parametrize("layout", ["missing", "empty", "no_files"])
def test_missing_or_empty_folder_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                         layout: str) -> None:
    root = tmp_path / "skill"
    if layout != "missing":
        (root / ("criteria" if layout == "no_files" else "")).mkdir(parents=True)
    code, out, err = check(capsys, str(root))
    assert code == 2 and not out
    assert len(err.strip().splitlines()) == 1 and str(root) in err


def test_a_file_is_not_a_skill_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# not a skill\n")
    code, out, err = check(capsys, str(readme))
    assert code == 2 and not out
    assert "is a file, not a skill folder" in err and "does not exist" not in err
