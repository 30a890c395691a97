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
#: An error of the agent named beside it (``error_agent``): any agent, the third included.
AGENT_ERROR = "agent_error"
POSITIONAL = ("agent_a_error", "agent_b_error")


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


def blamed(token: str | None, error_agent: str | None, agents: Sequence[str]) -> str | None:
    """The agent an error class blames, by id: ``error_agent`` when given, else the agent
    at the positional token's place (``agent_b_error`` -> ``agents[1]``); None otherwise."""
    if token is None or not token.endswith("_error"):
        return None
    if error_agent:
        return error_agent
    index = AGENT_LABELS.get(token.removesuffix("_error"))
    return agents[index] if index is not None and index < len(agents) else None


def resolve(token: str, error_agent: str | None, agents: Sequence[str]
            ) -> tuple[str, str | None]:
    """A classification as stored: the positional token whenever the blamed agent is one of
    the first two (what two-agent consumers read), ``agent_error`` for a later one, and the
    blamed agent's id beside it. ``ValueError`` when the pair names no agent of the cell."""
    if token == AGENT_ERROR:
        if error_agent is None or error_agent not in agents:
            raise ValueError("error_agent must be one of the cell's agents: "
                             + ", ".join(agents))
        index = list(agents).index(error_agent)
        return (POSITIONAL[index] if index < 2 else AGENT_ERROR), error_agent
    if token in POSITIONAL:
        named = blamed(token, None, agents)
        if error_agent is not None and error_agent != named:
            raise ValueError(f"error_agent {error_agent} is not the agent {token} names")
        return token, named
    if error_agent is not None:
        raise ValueError("error_agent goes only with an agent's error")
    return token, None


def class_key(token: str | None, error_agent: str | None, agents: Sequence[str]) -> str:
    """One label per class, to count classes of any number of agents against each other:
    the positional token for the first two agents, ``agent_error:<id>`` for a later one."""
    if token is None:
        return "n_a"
    who = blamed(token, error_agent, agents)
    if who is not None and who in agents and list(agents).index(who) < 2:
        return POSITIONAL[list(agents).index(who)]
    if who is not None and token.endswith("_error") and token not in POSITIONAL:
        return f"{AGENT_ERROR}:{who}"
    return token


def classification_label(token: str, agents: Sequence[str],
                         error_agent: str | None = None) -> str:
    """A classification as a reviewer reads it: ``agent_b_error`` -> ``error of skeptical``
    (``error of the second agent`` when ``agents`` does not reach it), ``agent_error`` with
    ``third`` (or the key ``agent_error:third``) -> ``error of third``, ``guideline_gap`` ->
    ``guideline gap``; a token outside the contract is shown as it is."""
    if token.startswith(AGENT_ERROR + ":"):
        token, error_agent = AGENT_ERROR, token.split(":", 1)[1]
    if token == AGENT_ERROR:
        return "error of " + (error_agent or "an agent")
    if error_agent and token in POSITIONAL:
        return "error of " + error_agent
    base = token.removesuffix("_error")
    if token.endswith("_error") and base in AGENT_LABELS:
        index = AGENT_LABELS[base]
        return "error of " + (agents[index] if index < len(agents) else _ORDINALS[index])
    return _WORDS.get(token, token)


def classification_choices(agents: Sequence[str]) -> list[dict[str, str | None]]:
    """The validate form's choices in its order: guideline gap, one error per agent, true
    ambiguity, n/a. Each has the wire ``value`` (posted as ``classification``), the blamed
    ``error_agent`` (posted beside it), a ``key`` unique in the form, and its ``label``. The
    first two agents keep their positional tokens; a third or later one is ``agent_error``."""
    out: list[dict[str, str | None]] = []
    errors: list[tuple[str, str | None]] = [
        (POSITIONAL[i] if i < 2 else AGENT_ERROR, a) for i, a in enumerate(agents)]
    errors += [(t, None) for t in POSITIONAL[len(errors):]]  # fewer than two agents named
    for token in FORM_ORDER:
        if token == POSITIONAL[1]:
            continue
        if token != POSITIONAL[0]:
            out.append({"value": token, "error_agent": None, "key": token,
                        "label": classification_label(token, agents)})
            continue
        for value, who in errors:
            key = value if value != AGENT_ERROR else f"{AGENT_ERROR}:{who}"
            out.append({"value": value, "error_agent": who, "key": key,
                        "label": classification_label(value, agents, who)})
    return out

