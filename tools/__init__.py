"""Dev-only tooling: the embedded broker, the demo, benchmarks, sample generators, fakes.

Nothing in schemas, streams, agents or cli imports this package (import-linter checks it);
its extra dependencies come with the `dev` extra (`pip install -e .[test,dev]`).
"""
