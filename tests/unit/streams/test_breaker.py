"""The circuit breaker's decisions (streams.breaker), clock injected: closed -> open on an
outage, one probe after the backoff, doubled backoff on a failed probe, closed by any answer;
a record failing while others are answered is failing on its own and trips nothing."""

from __future__ import annotations

import pytest

from streams.breaker import CLOSED, HALF_OPEN, OPEN, CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def breaker() -> tuple[CircuitBreaker, Clock]:
    clock = Clock()
    return CircuitBreaker(base=2.0, cap=5.0, clock=clock), clock


def test_an_outage_opens_it_and_only_one_probe_starts_after_the_backoff() -> None:
    b, clock = breaker()
    t1, t2 = b.admit(), b.admit()
    assert t1 is not None and t2 is not None and not t1.probe
    clock.now += 1
    assert b.failed(t1) is False  # no answer since it started: an outage
    assert b.state == OPEN and b.admit() is None
    assert b.failed(t2) is False and b.opened == 1  # a straggler changes nothing
    clock.now += 1.9
    assert b.admit() is None
    clock.now += 0.2
    probe = b.admit()
    assert probe is not None and probe.probe and b.state == HALF_OPEN
    assert b.admit() is None  # exactly one probe


@pytest.mark.parametrize(("probes_failed", "backoff"), [(0, 2.0), (1, 4.0), (2, 5.0),
                                                         (5, 5.0)])
def test_each_failed_probe_doubles_the_backoff_up_to_the_cap(probes_failed: int,
                                                              backoff: float) -> None:
    b, clock = breaker()
    ticket = b.admit()
    assert ticket is not None
    b.failed(ticket)
    for _ in range(probes_failed):
        clock.now += 10
        probe = b.admit()
        assert probe is not None and probe.probe
        assert b.failed(probe) is False
    assert b.backoff == backoff and b.state == OPEN


def test_an_answer_closes_it_and_resets_the_backoff() -> None:
    b, clock = breaker()
    ticket = b.admit()
    assert ticket is not None
    b.failed(ticket)
    clock.now += 10
    probe = b.admit()
    assert probe is not None
    b.failed(probe)
    clock.now += 10
    assert b.admit() is not None
    b.answered()
    assert b.state == CLOSED and b.backoff == 2.0
    assert b.admit() is not None


@pytest.mark.parametrize("probe", [False, True])
def test_a_record_failing_while_others_are_answered_fails_on_its_own(probe: bool) -> None:
    b, clock = breaker()
    if probe:
        first = b.admit()
        assert first is not None
        b.failed(first)
        clock.now += 3
    ticket = b.admit()
    assert ticket is not None and ticket.probe is probe
    clock.now += 1
    b.answered()  # another record's call was answered meanwhile
    clock.now += 1
    assert b.failed(ticket) is True
    assert b.state == CLOSED and b.admit() is not None


def test_a_probe_that_made_no_call_hands_the_probe_on() -> None:
    b, clock = breaker()
    ticket = b.admit()
    assert ticket is not None
    b.failed(ticket)
    clock.now += 3
    probe = b.admit()
    assert probe is not None and probe.probe
    b.finished(probe)  # e.g. a record settled in code: proves nothing
    assert b.state == OPEN
    nxt = b.admit()
    assert nxt is not None and nxt.probe


async def test_waiters_are_admitted_when_an_answer_closes_it() -> None:
    b = CircuitBreaker(base=30.0, cap=60.0)
    ticket = b.admit()
    assert ticket is not None
    b.failed(ticket)
    assert await b.wait_turn(0.05) is None  # open: not yet
    b.answered()
    got = await b.wait_turn(0.05)
    assert got is not None and not got.probe


def test_the_records_own_earlier_answer_is_no_evidence_against_an_outage() -> None:
    """A first turn answered, then its repair call unavailable: an outage, not a record
    failing on its own."""
    b, clock = breaker()
    ticket = b.admit()
    assert ticket is not None
    clock.now += 1
    b.answered(ticket)
    clock.now += 1
    assert b.failed(ticket) is False and b.state == OPEN
    other = b.admit()
    assert other is None  # open: nothing starts


def test_a_record_whose_probe_failed_lets_a_fresh_one_probe_first() -> None:
    b, clock = breaker()
    ticket = b.admit()
    assert ticket is not None
    b.failed(ticket)
    clock.now += 3
    b.fresh_waiting = 1  # a fresh record waits (wait_turn counts them)
    assert b.admit(fresh=False) is None
    probe = b.admit(fresh=True)
    assert probe is not None and probe.probe
    b.fresh_waiting = 0
    b.finished(probe)
    assert b.admit(fresh=False) is not None  # nobody fresh left: it probes again
