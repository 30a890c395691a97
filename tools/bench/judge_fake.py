"""The fake Messages API as its own process for ``judgeflow bench judge``.

A separate process so that the server's threads do not compete with the worker for the
GIL (a real API is remote). Answers every request after ``--latency`` seconds (``--slow``
when the request contains the slow marker) with a JudgeAnalysis that passes the judge's
checks, so results are ``ok``: no suggested answer, two plain sentences without quotes,
one to three pointers to notes the case shows (or lists), and correctness and hint that fit
the job kind. It enforces the tier given by ``--rpm/--itpm/--otpm/--minute-seconds``
(:mod:`tools.fakes.fake_tier`). Prints its base URL on the first line; when stdin closes
it prints one JSON line of tier statistics (what it admitted and refused) and exits.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from typing import Any

SLOW_MARK = "bench-slow-call"
#: the note blocks of the case message: ``<<DATA-<boundary> note <id> (...``
NOTE = re.compile(r"<<DATA-\S+ note (\S+) \(")
#: the patient's notes the case lists without showing them: ``<id> (<n> characters)``
OTHER = re.compile(r"(\S+) \(\d+ characters\)")
KIND = re.compile(r"^Kind: (\w+)$", re.M)
REASONING = ("The notes give mixed evidence for this criterion. The reviewer should compare "
             "the passages the agents cited before deciding.")
THINKING_TOKENS = 150


def analysis(case: str) -> dict[str, Any]:
    """A valid JudgeAnalysis for the case message ``case``."""
    others = case.split("Other notes of this patient, not shown:", 1)[1:]
    found = NOTE.findall(case) + (OTHER.findall(others[0]) if others else [])
    notes = list(dict.fromkeys(found))[:3]
    kind = (KIND.search(case) or [None, "disagreement"])[1]
    low = kind == "low_confidence"
    return {"suggested_answer": None, "reasoning": REASONING,
            "evidence_pointers": [{"note_id": n, "what_to_look_for": "the cited passage",
                                   "offsets": None} for n in notes],
            "agent_correctness": "n_a" if low else "neither",
            "classification_hint": "n_a" if low else "true_ambiguity",
            "judge_confidence": "low"}


def case_of(body: dict[str, Any]) -> str:
    first = (body.get("messages") or [{}])[0].get("content")
    if isinstance(first, list):
        return " ".join(str(b.get("text", "")) for b in first if isinstance(b, dict))
    return str(first or "")


def main() -> None:
    from tools.fakes.fake_anthropic import FakeAnthropic, Reply, add_tier_args, tier_from

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--slow", type=float, default=5.0)
    add_tier_args(parser)
    args = parser.parse_args()

    def respond(body: dict[str, Any]) -> Any:
        case = case_of(body)
        text = json.dumps(analysis(case))
        slow = SLOW_MARK in case
        return Reply.message(text=text, delay=args.slow if slow else args.latency,
                             output_tokens=THINKING_TOKENS + math.ceil(len(text) / 3.5))

    fake = FakeAnthropic(responder=respond, tier=tier_from(args))
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
        sys.stdout.write(json.dumps(fake.state.limits.stats()) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
