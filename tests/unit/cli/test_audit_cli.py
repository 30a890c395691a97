"""``judgeflow audit --reviewer NAME`` only reads the page's reviewer key: a key it made would
map the name to an id no page ever used (and governance would read "0 events")."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.main import main
from dashboard.identity import KEY_ENV, KEY_FILE, pseudonym, reviewer_key


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.setenv("JUDGEFLOW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:9")
    return tmp_path / "state"


def test_a_name_without_the_page_key_is_exit_2_and_writes_nothing(
        state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "--reviewer", "alice"]) == 2
    err = capsys.readouterr().err
    assert f"no reviewer key found at {state / KEY_FILE}" in err, err
    assert "JUDGEFLOW_STATE_DIR" in err and err.count("\n") == 1 and "Kafka" not in err
    assert not state.exists()


def test_a_reader_never_creates_the_key(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        reviewer_key(None, tmp_path / "state", create=False)
    assert not (tmp_path / "state").exists()
    made = reviewer_key(None, tmp_path / "state")  # the page's first start makes it
    assert reviewer_key(None, tmp_path / "state", create=False) == made


def test_the_page_key_names_the_reviewer(state: Path) -> None:
    from cli.audit import reviewer_id
    from streams.settings import Settings

    key = reviewer_key(None, state)
    assert reviewer_id("alice", Settings()) == pseudonym(key, "alice")
    assert reviewer_id("rv-0123456789abcdef", Settings()) == "rv-0123456789abcdef"
