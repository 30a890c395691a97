"""The fake Messages API as its own process for ``judgeflow bench judge``.

A separate process so that the server's threads do not compete with the worker for the
GIL (a real API is remote). Answers every request with a valid JudgeAnalysis after
``--latency`` seconds, or after ``--slow`` seconds when the request contains the slow
marker. Prints its base URL on the first line; runs until stdin closes or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

SLOW_MARK = "bench-slow-call"
ANSWER: dict[str, Any] = {
    "suggested_answer": None, "reasoning": "Benchmark answer: the evidence is mixed.",
    "evidence_pointers": [], "agent_correctness": "n_a",
    "classification_hint": "true_ambiguity", "judge_confidence": "low"}


def main() -> None:
    from tools.fakes.fake_anthropic import FakeAnthropic, Reply

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--slow", type=float, default=5.0)
    args = parser.parse_args()
    text = json.dumps(ANSWER)

    def respond(body: dict[str, Any]) -> Any:
        slow = SLOW_MARK in json.dumps(body.get("messages"))
        return Reply.message(text=text, delay=args.slow if slow else args.latency)

    fake = FakeAnthropic(responder=respond)
    # answer in one TCP segment: the fake writes headers and body separately, and Nagle +
    # delayed ACK would add ~40 ms per call that no real server adds
    fake._server.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
    # socketserver listens with a backlog of 5: a burst of concurrent connects would see
    # dropped SYNs and one-second retransmits
    fake._server.socket.listen(1024)
    fake.start()
    sys.stdout.write(fake.base_url + "\n")
    sys.stdout.flush()
    try:
        sys.stdin.read()  # until the parent closes our stdin (or dies)
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
