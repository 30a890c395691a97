# The two commands of the README: `make demo` and `make test`. Both install what they need first.
.PHONY: demo test lint bootstrap schemas bench

bootstrap:
	@./scripts/bootstrap.sh

demo: bootstrap
	.venv/bin/judgeflow demo

# Lint first, tests last: pytest's summary line is the closing line CI reads.
test: bootstrap
	.venv/bin/ruff check .
	.venv/bin/mypy schemas streams agents dashboard
	.venv/bin/python -m pytest -q -rs -p no:cacheprovider

lint: bootstrap
	.venv/bin/ruff check .
	.venv/bin/mypy schemas streams agents dashboard

schemas: bootstrap
	.venv/bin/judgeflow schemas generate
