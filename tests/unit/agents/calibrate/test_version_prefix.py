"""``judgeflow compare`` names a prompt version by any unambiguous prefix."""

from __future__ import annotations

import pytest

from agents.calibrate.compare import AmbiguousVersion, resolve_version

KNOWN = ["judge-v3+281779b55609", "judge-v3+9a0c11d2e7f4", "judge-v3+9a0c77aa0000"]


@pytest.mark.parametrize(("given", "version"), [
    ("judge-v3+281779b55609", "judge-v3+281779b55609"),  # the whole version
    ("judge-v3+281779b", "judge-v3+281779b55609"),  # the demo's old truncated column
    ("judge-v3+2", "judge-v3+281779b55609"),
    ("judge-v3+9a0c1", "judge-v3+9a0c11d2e7f4"),
    ("judge-v4+abc", "judge-v4+abc"),  # unknown: unchanged (the caller reports it)
])
def test_resolves(given: str, version: str) -> None:
    assert resolve_version(given, KNOWN) == version


def test_an_exact_version_wins_over_longer_ones_it_prefixes() -> None:
    assert resolve_version("judge-v3+ab", ["judge-v3+ab", "judge-v3+abc"]) == "judge-v3+ab"


@pytest.mark.parametrize("given", ["judge-v3+9a0c", "judge-v3+", "j"])
def test_ambiguous_prefix_names_every_match(given: str) -> None:
    with pytest.raises(AmbiguousVersion) as err:
        resolve_version(given, KNOWN)
    matches = [v for v in KNOWN if v.startswith(given)]
    assert all(v in str(err.value) for v in matches) and f"{len(matches)} versions" in str(
        err.value)
    assert "\n" not in str(err.value)
