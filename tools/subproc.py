"""Run judgeflow workers as child processes (demo, benchmarks, tests).

Settings travel as the same ``JUDGEFLOW_*`` environment an operator would set. Children get
their own process group and are stopped by PID (SIGTERM, then SIGKILL), so nothing outlives
the parent's ``with`` block.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from streams.settings import Settings
from streams.settings_env import settings_env
from tools.broker import die_with_parent

__all__ = ["WorkerProcess", "settings_env"]


class WorkerProcess:
    """``judgeflow worker NAME`` in a child process, logging to ``log_path``.

    ``module_args`` runs ``python -m <module_args...>`` instead (benchmark processes)."""

    def __init__(self, name: str, settings: Settings, log_path: Path,
                 extra_env: Mapping[str, str] | None = None,
                 module_args: Sequence[str] | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGEFLOW_")}
        env.update(settings_env(settings, reveal_secrets=True))
        env.update(extra_env or {})
        self.name = name
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", *(module_args or ("cli.main", "worker", name))],
            env=env,
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=die_with_parent)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL, timeout: float = 20.0) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if not self._log.closed:
            self._log.close()

    def stop(self) -> None:
        """Graceful stop (SIGTERM), SIGKILL if it does not exit in time."""
        self.kill(signal.SIGTERM)

    def send_signal(self, sig: int = signal.SIGTERM) -> None:
        """Send ``sig`` to the process group and return (see :func:`stop_all`)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)

    def exit_reason(self) -> str:
        """``exited with status N: <its last log line>`` (workers log why they stop at ERROR;
        their log at INFO and above carries no patient data)."""
        lines = [ln for ln in self.log_text().splitlines() if ln.strip()]
        last = lines[-1].split(": ", 1)[-1] if lines else "no log output"
        return f"exited with status {self.proc.poll()}: {last}"

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def __enter__(self) -> WorkerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


def stop_all(procs: Sequence[WorkerProcess], timeout: float = 20.0) -> None:
    """Stop processes side by side: SIGTERM to all, then wait for each until one shared
    deadline, SIGKILL for any still running. Stopped one after another, five workers that
    each take seconds to leave their group on a loaded machine added up to over a minute
    after the demo's Ctrl-C."""
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for proc in procs:
        proc.kill(signal.SIGTERM, timeout=max(0.1, deadline - time.monotonic()))
