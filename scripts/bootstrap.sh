#!/usr/bin/env bash
# Create (or refresh) the project venv under .venv and install judgeflow with its test and dev
# extras (dev: the embedded broker that the demo, the benchmarks and the tests run on).
# Idempotent: a second run only reinstalls when pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if ! "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "judgeflow needs Python >= 3.11 (found $("$PY" --version 2>&1)); set PYTHON=..." >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $("$PY" --version)"
  "$PY" -m venv .venv
fi
stamp=.venv/.judgeflow-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "==> installing judgeflow with its test and dev extras into .venv"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e '.[test,dev]'
  touch "$stamp"
fi
# Apache Kafka for the tests: its classpath from Maven (tools/kafka/pom.xml), cached in ~/.m2 and
# ~/.cache/judgeflow; without Java or Maven this says why and the Apache Kafka tests skip.
.venv/bin/python -m tools.kafka
# Browser, promtool and podman for the dashboard and deploy checks (best effort, see there).
./scripts/system-deps.sh
