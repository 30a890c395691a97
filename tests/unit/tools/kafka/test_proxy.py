"""The loopback proxy the cut-off test puts between a worker and the brokers."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator

import pytest

from tools.broker import free_port
from tools.kafka.proxy import TcpProxy


class Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(1024):
            self.request.sendall(data)


@pytest.fixture()
def echo() -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def roundtrip(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(b"ping")
        return sock.recv(16)


def test_cut_drops_connections_and_refuses_new_ones_until_restored(echo: int) -> None:
    proxy = TcpProxy(free_port(), echo)
    try:
        proxy.restore()
        assert roundtrip(proxy.listen_port) == b"ping"
        held = socket.create_connection(("127.0.0.1", proxy.listen_port), timeout=5)
        held.sendall(b"a")
        assert held.recv(4) == b"a"
        proxy.cut()
        assert proxy.cut_off
        with pytest.raises(OSError):
            roundtrip(proxy.listen_port)
        assert held.recv(4) == b""  # the open connection was reset or closed
        held.close()
        proxy.restore()
        assert roundtrip(proxy.listen_port) == b"ping"
    finally:
        proxy.close()
