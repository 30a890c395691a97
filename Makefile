# The two commands of the README: `make demo` and `make test`. Both install what they need first.
# The test tiers (markers assigned in tests/conftest.py, docs/testing.md):
#   make test-fast         unit + contract tests, no broker: the inner loop (about 1 minute)
#   make test-integration  the integration tests: Apache Kafka, the embedded broker's smoke set
#   make test              lint, then both tiers: what CI runs (.ci/run)
.PHONY: demo test test-fast test-integration lint bootstrap schemas bench

# Three processes on the two-core machine: the integration tests spend a third of their time
# waiting on brokers and workers (two processes kept the cores 65% busy; three: 19 -> 16 min).
# --dist loadfile keeps a file's tests in one process, so a module's cluster starts once.
JOBS ?= 3
# `make test DURATIONS=0` lists every test's time (CI prints the slowest 15).
DURATIONS ?= 15
PYTEST = .venv/bin/python -m pytest -q -rs -p no:cacheprovider -n $(JOBS) --dist loadfile

bootstrap:
	@./scripts/bootstrap.sh

demo: bootstrap
	.venv/bin/judgeflow demo $(DEMO_ARGS)

# Lint first, tests last: pytest's summary line is the closing line CI reads.
test: lint
	$(PYTEST) --durations=$(DURATIONS)

test-fast: bootstrap
	$(PYTEST) -m "not integration"

test-integration: bootstrap
	$(PYTEST) -m integration --durations=15

# lint-imports checks the layer contracts in pyproject.toml ([tool.importlinter]); vulture
# finds dead code (at 80%: unused imports, arguments and unreachable code; below that it
# mistakes what pydantic, Faust and aiohttp call for dead).
lint: bootstrap
	.venv/bin/ruff check .
	.venv/bin/mypy schemas streams agents dashboard cli tools
	.venv/bin/lint-imports
	.venv/bin/vulture --min-confidence 80 schemas streams agents dashboard cli tools

schemas: bootstrap
	.venv/bin/judgeflow schemas generate

# Both benchmarks on a fresh embedded broker; see docs/benchmarks.md.
bench: bootstrap
	.venv/bin/judgeflow bench detect
	.venv/bin/judgeflow bench judge
