"""Synthetic sample data for judgeflow: a phenotype skill, patient charts and agent answers.

Everything under ``data/`` is produced by :mod:`tools.sampledata.generate` (deterministic,
seeded) and checked in; regenerate with ``python -m tools.sampledata.generate``. No real
patient information: every name, identifier and date is invented. See ``README.md`` for the
files, the scenarios and the ground truth the detector is tested against.
"""

from __future__ import annotations

from pathlib import Path

#: The checked-in sample data set (``skill/``, ``charts/``, ``answers.jsonl``, ``truth.jsonl`` ...).
DATA_DIR: Path = Path(__file__).resolve().parent / "data"

__all__ = ["DATA_DIR"]
