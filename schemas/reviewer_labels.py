"""The judge contract's positional reviewer labels (``agent_a``, ``agent_b_error``) named by
the agents' ids for what a person reads.

The tokens stay on the wire for compatibility (``classification_hint``, ``Adjudication.
classification``, a calibration record's confusion labels); every screen (the review page,
the demo's tables, ``judgeflow compare``) turns them into words here, with the ``agents``
list of the result or record they came with. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

#: The analysis's positional reviewer labels (the platform's judge contract) -> position.
AGENT_LABELS = {"agent_a": 0, "agent_b": 1}
#: How a label reads when the record does not say which agent stands at its position
#: (results and records written before ``agents`` existed).
_ORDINALS = ("the first agent", "the second agent")
_WORDS = {"guideline_gap": "guideline gap", "true_ambiguity": "true ambiguity",
          "n_a": "n/a (not a disagreement)"}
#: The validate form's order: the issue's four classes, then "not a disagreement".
FORM_ORDER = ("guideline_gap", "agent_a_error", "agent_b_error", "true_ambiguity", "n_a")


def name_agents(label: str | None, agents: Sequence[str]) -> str | None:
    """A label of the judge contract with its reviewers named: ``agent_a`` -> ``default``,
    ``agent_b_error`` -> ``skeptical_error``, ``both`` -> ``default+skeptical``; other labels
    (``neither``, ``guideline_gap``, ``n_a``) and labels without a known agent are kept."""
    if label is None:
        return None
    base, suffix = (label[:-6], "_error") if label.endswith("_error") else (label, "")
    if base in AGENT_LABELS and AGENT_LABELS[base] < len(agents):
        return agents[AGENT_LABELS[base]] + suffix
    if label == "both" and len(agents) >= 2:
        return f"{agents[0]}+{agents[1]}"
    return label


def classification_label(token: str, agents: Sequence[str]) -> str:
    """A classification as a reviewer reads it: ``agent_b_error`` -> ``error of skeptical``
    (``error of the second agent`` when ``agents`` does not reach it), ``guideline_gap`` ->
    ``guideline gap``; a token outside the contract is shown as it is."""
    base = token.removesuffix("_error")
    if token.endswith("_error") and base in AGENT_LABELS:
        index = AGENT_LABELS[base]
        return "error of " + (agents[index] if index < len(agents) else _ORDINALS[index])
    return _WORDS.get(token, token)


def classification_choices(agents: Sequence[str]) -> list[dict[str, str]]:
    """The validate form's choices: each wire token with its label, in the form's order.
    A third or later agent cannot be blamed: the contract names the first two only."""
    return [{"value": c, "label": classification_label(c, agents)} for c in FORM_ORDER]

