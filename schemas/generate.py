"""Generate ``schemas/json/*.json`` from the models (the models are the source of truth)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from schemas import medkit
from schemas.registry import json_models

JSON_DIR = Path(__file__).resolve().parent / "json"
#: Extra generated files (a tool's input schema): file name -> function returning its JSON.
EXTRA_JSON: dict[str, Callable[[], Any]] = {**medkit.EXTRA_JSON}


def render_all() -> dict[str, bytes]:
    extra = EXTRA_JSON
    out: dict[str, bytes] = {}
    opt = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    for name, model in json_models().items():
        schema = model.model_json_schema(mode="validation")
        out[f"{name}.json"] = orjson.dumps(schema, option=opt) + b"\n"
    for file_name, render in extra.items():
        out[file_name] = orjson.dumps(render(), option=opt) + b"\n"
    return out


def generate(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in render_all().items():
        path = directory / name
        path.write_bytes(data)
        written.append(path)
    return written


def check(directory: Path) -> list[str]:
    """Names of files that are missing, differ, or are no longer generated."""
    expected = render_all()
    drift = [n for n, data in expected.items()
             if not (directory / n).is_file() or (directory / n).read_bytes() != data]
    drift += [p.name for p in directory.glob("*.json") if p.name not in expected]
    return sorted(drift)
