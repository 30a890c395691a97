"""Shared fixtures and the suite's tiers. The brokers are real, on 127.0.0.1, started here and
stopped by PID when the session ends; nothing started by a test outlives the run.

**Which broker a Kafka test runs on.** ``broker`` (and ``bootstrap`` on top of it) is Apache
Kafka (tools/kafka; skipped with the reason when Java or Maven are missing): every
integration scenario runs there. A test marked ``@pytest.mark.brokers("embedded", "apache")``
runs on the embedded broker (noida-db) as well: the tests of what runs on it by default
(the demo, local development: a smoke set) and those that exercise one of its client-side
work-arounds (streams/fetch_backoff.py, streams/member_eviction.py). Test ids end in
``[embedded]`` / ``[apache]``; ``--brokers embedded`` (or ``embedded,apache``) runs every
Kafka test on the brokers named instead. Each broker is session-scoped, so it starts once per pytest
process (once per xdist worker), and pytest groups the tests by kind.

**Markers**, assigned here from where a test is rather than in each file:

* ``integration``: everything under tests/integration (a real broker or real processes);
* ``apache``: runs on Apache Kafka (the ``apache`` variant of ``broker``, or a module that
  starts its own cluster through ``tests.kafka.apache_kafka_or_skip``);
* ``browser``: drives chromium (a module that imports ``tools.browser.launch``);
* ``slow``: marked in the file, a test that takes a minute or more on its own.

The tiers (Makefile): ``make test-fast`` is ``-m "not integration"`` (unit + contract, no
broker); ``make test-integration`` is ``-m integration``; ``make test`` is both.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kafka import BROKER_KINDS, TestBroker, apache_kafka_or_skip
from tools.broker import EmbeddedBroker
from tools.browser import launch
from tools.kafka import ApacheKafka

INTEGRATION = Path(__file__).parent / "integration"
#: the broker of a Kafka test unless it is marked ``brokers(...)``
DEFAULT_BROKERS = ("apache",)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--brokers", metavar="KINDS", type=_kinds, default=None,
                     help="run every Kafka test on these brokers instead of its own "
                          f"(comma-separated: {','.join(BROKER_KINDS)}); "
                          "--brokers embedded is the quick loop while editing")


def _kinds(value: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    if not kinds or set(kinds) - set(BROKER_KINDS):
        raise pytest.UsageError(f"--brokers takes {' and/or '.join(BROKER_KINDS)}, "
                                f"comma-separated (got {value!r})")
    return kinds


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "broker" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("brokers")
        kinds = (metafunc.config.getoption("brokers")
                 or (marker.args if marker else DEFAULT_BROKERS))
        metafunc.parametrize("broker", kinds, indirect=True, scope="session")


def _module_uses(item: pytest.Item, *tools: object) -> bool:
    """Whether the test's module imported one of ``tools`` (what a module starts shows there)."""
    names = vars(getattr(item, "module", None) or object).values()
    return any(v is t for v in names for t in tools)


def _weight(item: pytest.Item) -> int:
    """How early the test's module should start (lower first): see the hook below."""
    if item.get_closest_marker("slow") is not None:
        return 0
    if _module_uses(item, ApacheKafka, apache_kafka_or_skip):  # starts a cluster of its own
        return 1
    return 2 if INTEGRATION in item.path.parents else 3


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The longest modules first, the unit tests last: pytest-xdist (--dist loadfile) hands
    # out modules in this order, so the many short ones fill in at the end instead of one
    # process finishing a 5-minute module while the other waits. A module keeps its place
    # (and its tests their order): the key is the module's lowest weight.
    module_weight: dict[Path, int] = {}
    for item in items:
        module_weight[item.path] = min(module_weight.get(item.path, 3), _weight(item))
    items.sort(key=lambda item: module_weight[item.path])
    for item in items:
        if INTEGRATION in item.path.parents:
            item.add_marker(pytest.mark.integration)
        if _module_uses(item, launch):
            item.add_marker(pytest.mark.browser)
        callspec = getattr(item, "callspec", None)
        kind = callspec.params.get("broker") if callspec else None
        if kind == "apache" or (kind is None and _module_uses(item, ApacheKafka,
                                                               apache_kafka_or_skip)):
            item.add_marker(pytest.mark.apache)


@pytest.fixture(scope="session")
def embedded_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedBroker]:
    with EmbeddedBroker(data_dir=tmp_path_factory.mktemp("broker")) as embedded:
        yield embedded


@pytest.fixture(scope="session")
def apache_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApacheKafka]:
    with apache_kafka_or_skip(work_dir=tmp_path_factory.mktemp("kafka")) as apache:
        yield apache


@pytest.fixture(scope="session")
def broker(request: pytest.FixtureRequest) -> TestBroker:
    # Each kind is its own session fixture, so going from an [embedded] test to an [apache]
    # one and back does not stop and restart Apache Kafka (a JVM start costs seconds of CPU).
    found: TestBroker = request.getfixturevalue(f"{request.param}_broker")
    return found


@pytest.fixture()
def bootstrap(broker: TestBroker) -> str:
    return broker.bootstrap
