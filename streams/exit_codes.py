"""The exit statuses of every ``judgeflow`` process (commands and workers).

Workers map how they ended in :func:`streams.worker_main.guarded`; the command line maps
errors to these statuses in one table, ``cli.errors.ERRORS``. docs/operations.md lists them
under "Exit statuses"; deploy manifests and scripts rely on the numbers.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    #: unreachable Kafka, a check that found problems, or an unexpected failure
    FAILURE = 1
    #: a mistake the user must fix before anything can run: a bad option, setting, input file,
    #: skill folder, model or credentials (argparse's usage errors exit 2 as well)
    USAGE = 2
    #: the same status, as workers name it: the worker cannot use its configuration
    CANNOT_START = 2
    #: a replay stopped at its budget (run again with a larger one to continue)
    BUDGET_REACHED = 3
    #: the detector could not publish an output and exits at once (EX_SOFTWARE)
    UNPUBLISHED = 70
    #: interrupted from the terminal (Ctrl-C)
    INTERRUPTED = 130


class CommandError(Exception):
    """A mistake the user fixes (an option, an input file, a name): one line, ``code``."""

    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.code = code
