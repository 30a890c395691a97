# The two commands of the README: `make demo` and `make test`. Both install what they need first.
.PHONY: demo test lint bootstrap schemas bench

bootstrap:
	@./scripts/bootstrap.sh

demo: bootstrap
	.venv/bin/judgeflow demo $(DEMO_ARGS)

# Lint first, tests last: pytest's summary line is the closing line CI reads.
# lint-imports checks the layer contracts in pyproject.toml ([tool.importlinter]).
test: bootstrap
	.venv/bin/ruff check .
	.venv/bin/mypy schemas streams agents dashboard cli tools
	.venv/bin/lint-imports
	.venv/bin/python -m pytest -q -rs -p no:cacheprovider

lint: bootstrap
	.venv/bin/ruff check .
	.venv/bin/mypy schemas streams agents dashboard cli tools
	.venv/bin/lint-imports

schemas: bootstrap
	.venv/bin/judgeflow schemas generate

# Both benchmarks on a fresh embedded broker; see docs/benchmarks.md.
bench: bootstrap
	.venv/bin/judgeflow bench detect
	.venv/bin/judgeflow bench judge
