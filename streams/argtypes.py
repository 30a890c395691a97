"""argparse ``type=`` callables for counts, durations and amounts: a bad value is a usage error
(exit 2) with argparse's own one-line message, never a traceback or a silent no-op run. In
``streams`` (like :mod:`streams.exit_codes`) so that a command kept in its feature's package
(``agents.replay.cli``) parses its options with the same types."""

from __future__ import annotations

import argparse
import math

from streams.settings_rules import bootstrap_problem


def _number(text: str, kind: type[int] | type[float]) -> int | float:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not {'an integer' if kind is int else 'a number'}") from None


def positive_int(text: str) -> int:
    """A count that must be at least 1 (records, calls, events, processes)."""
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """A count where 0 means "the default" or "off" (partitions, port 0 = a free port)."""
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
    return value


def positive_float(text: str) -> float:
    """A duration in seconds or an amount (USD) that must be more than 0 and finite: ``nan``
    compares false with everything (a budget of nan never stops a run) and ``inf`` or 0 make
    a poll loop spin or a wait never end."""
    value = float(_number(text, float))
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive finite number, got {text}")
    return value


def port(text: str) -> int:
    """A TCP port; 0 asks for a free one."""
    value = non_negative_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number (0-65535), got {text}")
    return value


def bootstrap_servers(text: str) -> str:
    """``--bootstrap-servers``: the check ``JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS`` gets (an
    empty value is refused, never read as "use the environment's")."""
    problem = bootstrap_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text
