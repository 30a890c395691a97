"""What every settings model shares and the checks of values pydantic's types cannot say:
a Kafka bootstrap list, a Kafka topic name, a consumer group.

Each check returns the problem in words (or None) so that a settings validator and a command
line option (``--bootstrap-servers``) refuse a value with the same sentence, at settings load,
before any client is built (aiokafka would otherwise fail deep inside with ``int()`` or
``connect()`` errors). Messages never quote a secret; these values are not secrets.
"""

from __future__ import annotations

import ipaddress
import re

from pydantic import BaseModel, ConfigDict

#: ``inf`` or ``nan`` in a duration, share or budget is a mistake, never a setting: an
#: infinite timeout later crashes ``int(timeout * 1000)``, a nan compares false with any bound.
FINITE = ConfigDict(allow_inf_nan=False)

#: a port in a bootstrap address: digits only (``str.isdigit`` accepts "²")
_PORT = re.compile(r"[0-9]{1,5}")
_HOST = re.compile(r"[A-Za-z0-9._-]+")
#: Kafka's legal topic characters (``org.apache.kafka.common.internals.Topic``)
_TOPIC = re.compile(r"[A-Za-z0-9._-]+")
#: Kafka's limit is 249; every topic may get a ``.dlq`` sibling (TopicSettings.dlq),
#: which must be legal too.
TOPIC_MAX = 249 - len(".dlq")
#: a group name also names the detect worker's state folder and Faust's internal topics
#: (``<group>-<table>-changelog``): legal topic characters, with room for those suffixes
GROUP_MAX = 180
BOOTSTRAP_FORM = "host:port[,host:port...], IPv6 as [::1]:9092"


class SettingsModel(BaseModel):
    """The base of every nested settings group: the rules :class:`Settings` has too."""

    model_config = FINITE


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _address_problem(entry: str) -> str | None:
    host, colon, port = entry.rpartition(":")
    if not colon or not host or entry.endswith("]"):
        return f"{entry!r} has no port: give {BOOTSTRAP_FORM}"
    if host.startswith("[") and host.endswith("]"):
        if not _ipv6(host[1:-1]):
            return f"{entry!r}: {host} is not an IPv6 address"
    elif _ipv6(host) or _ipv6(entry):  # "::1:9092": where the address ends is a guess
        return f"{entry!r}: put an IPv6 address in brackets ([::1]:9092)"
    elif not _HOST.fullmatch(host):
        return f"{entry!r}: {host!r} is not a host name or address"
    if not _PORT.fullmatch(port) or not 1 <= int(port) <= 65535:
        return f"{entry!r}: the port must be a number from 1 to 65535"
    return None


def bootstrap_problem(value: str) -> str | None:
    """Why ``value`` is not a bootstrap list aiokafka and Faust can split, or None."""
    if not value.strip():
        return f"is empty: give {BOOTSTRAP_FORM}"
    for entry in value.split(","):
        if not entry.strip():
            return f"has an empty entry: give {BOOTSTRAP_FORM}"
        problem = _address_problem(entry.strip())
        if problem:
            return problem
    return None


def topic_problem(value: str) -> str | None:
    """Why ``value`` is not a legal Kafka topic name (with room for its ``.dlq``), or None."""
    if not (_TOPIC.fullmatch(value) and len(value) <= TOPIC_MAX) or value in (".", ".."):
        return (f"a Kafka topic name is 1 to {TOPIC_MAX} characters of a-z, A-Z, 0-9, '.', '_' "
                "and '-' (249 with its .dlq suffix), not '.' or '..'")
    return None


def group_problem(value: str, *, names_topics: bool) -> str | None:
    """Why ``value`` cannot be a consumer group name here, or None. A group that also names
    a state folder and Faust's topics (detect's) takes legal topic characters; Kafka takes
    any other non-empty id as it is."""
    if not names_topics:
        return None if value.strip() else "is empty: unset it for the default, or name a group"
    if not (_TOPIC.fullmatch(value) and len(value) <= GROUP_MAX) or value in (".", ".."):
        return (f"a consumer group name is 1 to {GROUP_MAX} characters of a-z, A-Z, 0-9, '.', "
                "'_' and '-' (it also names a state folder and Kafka topics), not '.' or '..'")
    return None


def refused(value: str, problem: str | None) -> str:
    """``value``, or the settings validator's ValueError saying ``problem``."""
    if problem:
        raise ValueError(problem)
    return value
