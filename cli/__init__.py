"""The ``judgeflow`` command line. Each subcommand lives in its own module."""
