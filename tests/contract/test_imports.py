"""Every import is one lint-imports can see: no module is imported by a name in a string
(``importlib.import_module("tools...")`` hid dev imports from the layer contracts), and the
contracts really run: violations planted in a copy of the tree (a cycle between siblings, an
upward import, an import of the tests) each break the contract that promises to catch them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("schemas", "streams", "agents", "dashboard", "cli", "tools", "dev")
#: The string imports there are, each a documented plug-in point a user names in a setting.
LISTED = {"streams/kafka_security.py":
          "JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER (module:callable)"}
STRING_IMPORT = re.compile(r"\bimport_module\(|\b__import__\(|\bimportlib\.util\.find_spec\(")


def test_no_module_is_imported_by_a_name_in_a_string() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}" for package in PACKAGES
             for path in sorted((ROOT / package).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if STRING_IMPORT.search(line) and str(path.relative_to(ROOT)) not in LISTED]
    assert not found, found


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the project's own contracts on the packages under ``root``."""
    exe = Path(sys.executable).with_name("lint-imports")
    return subprocess.run([str(exe), "--no-cache", "--no-logo", str(root / "pyproject.toml")],
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root), "COLUMNS": "500"},
                          capture_output=True, text=True, timeout=120)


def copy_of_the_packages(tmp_path: Path) -> Path:
    """The root packages' sources and pyproject.toml, to plant a violation in."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for package in config["tool"]["importlinter"]["root_packages"]:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_contracts_hold_on_the_tree() -> None:
    proc = lint_imports(ROOT)
    assert proc.returncode == 0 and "0 broken" in proc.stdout, proc.stdout + proc.stderr


#: (module planted -> what it imports, the contract that must break)
PLANTED = [
    # a cycle between two sibling modules inside one layer
    ({"streams/_planted_a.py": "import streams._planted_b\n",
      "streams/_planted_b.py": "import streams._planted_a\n"},
     "No import cycles inside a layer"),
    # the same one level down, between sibling packages
    ({"agents/_planted_p/__init__.py": "import agents._planted_q\n",
      "agents/_planted_q/__init__.py": "import agents._planted_p\n"},
     "No import cycles inside a layer"),
    # a lower layer importing a higher one
    ({"schemas/_planted_up.py": "import streams.settings\n"}, "Layers: "),
    # runtime code importing the tests
    ({"streams/_planted_tests.py": "import tests.conftest\n"}, "No package imports the tests"),
]


@pytest.mark.parametrize(("files", "contract"), PLANTED, ids=[c for _f, c in PLANTED])
def test_a_planted_violation_breaks_its_contract(files: dict[str, str], contract: str,
                                                 tmp_path: Path) -> None:
    """The contracts really run and catch what they promise: each violation, planted in a
    copy of the tree, fails ``lint-imports`` naming the contract."""
    root = copy_of_the_packages(tmp_path)
    if "tests" in "".join(files.values()):
        (root / "tests").mkdir()
        (root / "tests" / "__init__.py").write_text("")
        (root / "tests" / "conftest.py").write_text("")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    proc = lint_imports(root)
    assert proc.returncode != 0, proc.stdout
    broken = [line for line in proc.stdout.splitlines() if " BROKEN" in line]
    assert any(line.startswith(contract) for line in broken), proc.stdout


def test_dev_scripts_do_not_import_the_tests() -> None:
    """dev/ is not a package lint-imports checks; its scripts use tools/, never tests/."""
    found = [f"{path.name}:{n}" for path in sorted((ROOT / "dev").glob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.match(r"\s*(from|import) tests\b", line)]
    assert not found, found
