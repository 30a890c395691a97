"""Which client a connection's peer address counts as, for the per-client connection cap
(:class:`dashboard.limits.Guard`).

Counting by the exact address let one party hold every connection: a local process can bind
any of 127.0.0.0/8 (and ``::1``), ``::ffff:127.0.0.1`` counted apart from ``127.0.0.1``, and
one IPv6 host picks addresses freely within its /64. So: an IPv4-mapped IPv6 address is its
IPv4 address; every loopback address is one client (``loopback``); other IPv6 addresses
count by their /64; IPv4 by the address.
"""

from __future__ import annotations

import ipaddress

LOOPBACK = "loopback"


def client_of(host: str) -> str:
    """The client ``host`` (a peer address as the socket reports it) counts as."""
    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])  # a scope id (fe80::1%eth0)
    except ValueError:
        return host  # not an IP (a Unix socket's path, or none): counted as it is
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return LOOPBACK
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
