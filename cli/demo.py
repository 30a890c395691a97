"""``judgeflow demo``: the whole pipeline with the bundled samples, on an embedded broker (the
default), the repo's Apache Kafka, or the cluster the settings point at."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from agents.settings import Settings
from streams.argtypes import port, positive_float
from streams.exit_codes import CommandError

#: ``--broker`` choices (tools.demo.target.KINDS; kept here: the CLI imports no dev tooling
#: until the command runs)
KINDS = ("embedded", "apache", "cluster")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "demo", help="run detect, judge and debrief on sample data (embedded broker by default)",
        description="Start a Kafka cluster (see --broker) and the detect, judge and debrief "
        "workers; send the bundled sample answers (including malformed ones) and debrief "
        "requests; print cells by outcome, jobs by kind, dead letters, judge results and "
        "debrief verdicts. Uses Claude when ANTHROPIC_API_KEY is set, else the offline "
        "providers. The calibrate worker compares the judge with the sample adjudications; the "
        "summary ends with its table of answer accuracy and Cohen's kappa per field and prompt "
        "version. Stops everything it started; exit status 0 when every record was handled. "
        "The work directory (worker logs, broker data) is removed after a successful run "
        "unless --keep-logs is given; after a failure it is kept and its path printed. "
        "Where it runs: with no Kafka settings, on an embedded broker of its own (fast); "
        "given --bootstrap-servers (before `demo`) or any JUDGEFLOW_KAFKA__* connection "
        "setting (bootstrap servers, TLS, SASL), on that cluster. There it touches nothing "
        "that was there before: its topics and consumer groups are named under a fresh "
        "prefix (judgeflow-demo-<run id>.), a prefix that names an existing topic is refused, "
        "and at the end it deletes the topics and groups it created and says so. A wrong "
        "password or an unreachable cluster stops it at once in one line.",
        epilog="examples: judgeflow demo | judgeflow demo --broker apache | "
        "judgeflow --bootstrap-servers kafka-1:9093 demo (with JUDGEFLOW_KAFKA__SECURITY_"
        "PROTOCOL=SASL_SSL, JUDGEFLOW_KAFKA__SASL_MECHANISM=SCRAM-SHA-512, ..._SASL_USERNAME, "
        "..._SASL_PASSWORD, ..._SSL_CAFILE as for every command)")
    p.add_argument("--broker", choices=KINDS, default=None,
                   help="embedded: start noida-db (the default without Kafka settings); "
                   "apache: start a 1-node Apache Kafka from the repo's launcher (dev "
                   "tooling: Java 17+ and Maven, jars fetched once by `make bootstrap`); "
                   "cluster: the configured cluster (the default when Kafka settings are "
                   "given)")
    p.add_argument("--topic-prefix", metavar="PREFIX", default=None,
                   help="on a configured cluster: the prefix of the demo's topics and groups "
                   "(default judgeflow-demo-<run id>.; e.g. one your prefixed ACLs allow)")
    p.add_argument("--keep-topics", action="store_true",
                   help="on a configured cluster: leave the demo's topics and groups there "
                   "(to read them with `judgeflow tail` or the dashboard); say so at the end")
    p.add_argument("--settle", type=positive_float, default=5.0, metavar="S",
                   help="settle window in seconds for cells missing an agent (default 5)")
    p.add_argument("--timeout", type=positive_float, default=300.0, metavar="S",
                   help="give up when the outputs are not all in S seconds after the "
                        "workers started; starting the broker is not counted (default 300)")
    p.add_argument("--offline", action="store_true",
                   help="use the offline providers even if ANTHROPIC_API_KEY is set")
    p.add_argument("--dashboard", action="store_true",
                   help="leave a reviewer's loop: hold back the sample adjudications of "
                   "every third patient, and after the summary serve the review page over "
                   "the demo's topics on 127.0.0.1 (a demo reviewer signs in by the printed "
                   "link) with the workers and the broker running until Ctrl-C")
    p.add_argument("--dashboard-port", type=port, default=8765, metavar="PORT",
                   help="port of the review page on 127.0.0.1 (default 8765)")
    p.add_argument("--keep-logs", action="store_true",
                   help="keep the work directory with the worker logs after a successful run")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from cli.produce import produce
    from tools.demo.run import choose, pointed  # the listed import of dev tooling (contracts)
    from tools.demo.run import run as run_demo

    broker = choose(args.broker, settings.kafka)
    given = pointed(settings.kafka)
    if broker != "cluster" and (args.topic_prefix is not None or args.keep_topics):
        raise CommandError("--topic-prefix and --keep-topics apply to a configured cluster "
                           f"(--broker cluster), not to the demo's own {broker} broker")
    if broker != "cluster" and given:
        print(f"judgeflow demo: --broker {broker}: not using the configured cluster "
              f"({', '.join(given)} ignored)", file=sys.stderr)

    hold = None
    if args.dashboard:
        # dev tooling (the `dev` extra), imported only when asked for; listed in the contracts
        from tools import dashboard_launch as launch
        port = args.dashboard_port

        def hold(s: Settings, work: Path) -> None:
            launch.hold_open(s, work, port, sys.stdout)

    work = Path(tempfile.mkdtemp(prefix="judgeflow-demo-"))
    try:
        code = run_demo(settings, settle=args.settle, timeout=args.timeout,
                        offline=args.offline, out=sys.stdout, produce_fn=produce, hold_fn=hold,
                        work_dir=work, keep_logs=args.keep_logs, broker=broker,
                        topic_prefix=args.topic_prefix, keep_topics=args.keep_topics)
    except BaseException as exc:
        if any(work.glob("*.log")):
            if str(work) not in str(exc):  # else the error's one line already names them
                print(f"judgeflow demo: stopped; worker logs kept in {work}", file=sys.stderr)
        else:  # refused before any worker started (a login, an address): nothing to keep
            shutil.rmtree(work, ignore_errors=True)
        raise
    if code == 0 and not args.keep_logs:
        shutil.rmtree(work, ignore_errors=True)
    return code
