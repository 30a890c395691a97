"""Running the pinned Apache Kafka's Java entry points: the broker itself and its command-line
tools (StorageTool, AclCommand, ConfigCommand), with a small heap and a quick start."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

from tools.kafka.classpath import java_binary, kafka_classpath

LOG4J = Path(__file__).resolve().parent / "log4j2.properties"


def java_command(main: str, args: Sequence[str], *, heap: str = "384m",
                 fast_start: bool = True) -> list[str]:
    """``java ... main args``. ``fast_start`` stops the JIT at C1: the JVM is up in about half
    the time and the brokers of a test never run long enough to repay C2."""
    opts = [f"-Xmx{heap}", "-Xms64m", "-XX:+UseSerialGC", "-XX:-UsePerfData",
            "-Djava.awt.headless=true", f"-Dlog4j2.configurationFile={LOG4J}",
            "-Dkafka.logs.dir=/dev/null"]
    if fast_start:
        opts.append("-XX:TieredStopAtLevel=1")
    return [java_binary(), *opts, "-cp", kafka_classpath(), main, *args]


def run_tool(main: str, args: Sequence[str], *, timeout: float = 60.0) -> str:
    """Run a Kafka CLI tool to completion; its output, or :class:`ToolError` naming it."""
    cmd = java_command(main, args, heap="256m")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-6:])
        raise ToolError(f"{main.rsplit('.', 1)[-1]} {' '.join(args[:3])}... exit "
                        f"{proc.returncode}: {tail}")
    return proc.stdout


class ToolError(RuntimeError):
    """A Kafka command-line tool failed."""
