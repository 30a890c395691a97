"""Every import is one lint-imports can see: no module is imported by a name in a string
(``importlib.import_module("tools...")`` hid dev imports from the layer contracts), and the
contracts include the one that fails on a cycle inside a layer."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

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


def test_the_layer_check_fails_on_a_cycle_inside_a_layer() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    acyclic = [c for c in contracts if c["type"] == "acyclic_siblings"]
    roots = set(config["tool"]["importlinter"]["root_packages"])
    assert acyclic and set(acyclic[0]["ancestors"]) == roots


def test_dev_scripts_do_not_import_the_tests() -> None:
    """dev/ is not a package lint-imports checks; its scripts use tools/, never tests/."""
    found = [f"{path.name}:{n}" for path in sorted((ROOT / "dev").glob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.match(r"\s*(from|import) tests\b", line)]
    assert not found, found
