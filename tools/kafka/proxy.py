"""A loopback TCP proxy that a test can cut: clients behind it lose the broker as they would
behind a failed switch, while the broker itself keeps running.

Runs its own asyncio loop in a daemon thread, so synchronous tests drive it. :meth:`cut`
stops listening and drops every open connection (new connects are refused); :meth:`restore`
listens again on the same port.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class TcpProxy:
    def __init__(self, listen_port: int, target_port: int, host: str = "127.0.0.1",
                 target_host: str | None = None) -> None:
        self.listen_port = listen_port
        self.target_port = target_port
        self.host = host
        self.target_host = target_host or host
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name=f"tcp-proxy-{listen_port}")
        self._thread.start()

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)

    @property
    def cut_off(self) -> bool:
        return self._server is None

    def restore(self) -> None:
        """Listen (again)."""
        if self._server is None:
            self._server = self._run(self._listen())

    async def _listen(self) -> asyncio.Server:
        return await asyncio.start_server(self._serve, self.host, self.listen_port,
                                          reuse_address=True)

    def cut(self) -> None:
        """Refuse new connections and reset the open ones."""
        self._run(self._cut())

    async def _cut(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            with contextlib.suppress(Exception):
                writer.transport.abort()
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                with contextlib.suppress(Exception):
                    dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers.discard(writer)
        self._writers.discard(up_writer)

    async def _cancel_pipes(self) -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self.cut()
        self._run(self._cancel_pipes())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()
