"""Serving a campaign with uvicorn, bounded against slow and idle clients.

uvicorn counts every open connection against its concurrency limit and puts no time limit on a
request that never finishes arriving, so a few hundred sockets that send half a request line
and wait shut everybody else out (503). :func:`server_config` runs the app without uvicorn's
limit and with an HTTP protocol (:func:`protocol_class`) that bounds connections instead
(:class:`Limits`):

- a request, headers and body, must arrive within ``request_seconds`` of its first byte (or of
  the connection, for the first one); a connection that is too slow is closed;
- connections *waiting* (no request in progress: not yet sent, or idle between requests) are
  capped, per client address and in all: when a new one exceeds a cap, the connections of that
  client (or of anyone) that have waited longest are closed, down to the cap, among those
  waiting for more than ``grace_seconds``. A real browser sends its request at once, so the
  connections that go are those that hold a socket without using it, and a burst of new ones
  (from a proxy, say) is never cut;
- requests in progress are capped (:class:`RequestLimit`: 503 beyond), not open connections.

Behind a reverse proxy every connection comes from the proxy's address, so the per-client cap is
not applied to loopback addresses (the proxy on this machine): the proxy must bound clients
itself (the README's deployment section gives nginx's settings).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..extras import require

PURPOSE = "serving a rating campaign"
LOOPBACK = frozenset({"127.0.0.1", "::1"})  # the reverse proxy on this machine


@dataclass(frozen=True)
class Limits:
    """How long and how many (see the module docstring)."""

    request_seconds: float = 10.0  # to send one whole request (headers and body)
    idle_seconds: float = 5.0  # a kept-alive connection without a new request (uvicorn's)
    max_waiting: int = 64  # connections without a request in progress, in all
    max_waiting_per_client: int = 16  # ... from one client address (not loopback)
    grace_seconds: float = 0.5  # a connection younger than this is never closed for the caps
    max_requests: int = 256  # requests in progress at once (503 beyond)


DEFAULT_LIMITS = Limits()


def protocol_class(limits: Limits = DEFAULT_LIMITS) -> type:
    """A uvicorn h11 protocol class enforcing ``limits`` (its own registry of waiting
    connections: one class per server)."""
    h11 = require("h11", PURPOSE)
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting: OrderedDict[Any, tuple[str, float]] = OrderedDict()  # protocol -> (host, since)

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._wait()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            waiting.pop(self, None)
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.conn.their_state is h11.IDLE:  # the first bytes of a new request
                self._arm()
            super().data_received(data)
            self._follow()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._follow()

        # -- the request deadline -----------------------------------------------------------
        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(limits.request_seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.conn.their_state is not h11.DONE and not self.transport.is_closing():
                self.logger.info("closing a connection that sent no whole request in %.0f s",
                                 limits.request_seconds)  # fmt: skip
                self.transport.close()

        def _follow(self) -> None:
            """After h11 moved: a whole request stops its deadline and the waiting."""
            if self.conn.their_state is h11.DONE:
                self._disarm()
                waiting.pop(self, None)
            elif self.conn.their_state is h11.IDLE and (
                self.cycle is None or self.cycle.response_complete
            ):
                self._wait()  # idle between requests: waiting again

        # -- the caps on waiting connections --------------------------------------------------
        def _wait(self) -> None:
            host = self.client[0] if self.client else ""
            now = self.loop.time()
            waiting[self] = (host, now)
            waiting.move_to_end(self)
            if host not in LOOPBACK:
                mine = [p for p, (h, _) in waiting.items() if h == host]
                _evict(mine[: len(mine) - limits.max_waiting_per_client], now)
            _evict(list(waiting)[: len(waiting) - limits.max_waiting], now)

    def _evict(oldest: list[Any], now: float) -> None:
        """Close ``oldest`` (oldest first) that have waited beyond the grace period."""
        for protocol in oldest:
            if now - waiting[protocol][1] < limits.grace_seconds:
                break  # the rest are younger still
            waiting.pop(protocol, None)
            if not protocol.transport.is_closing():
                protocol.logger.info("closing a long-waiting connection (too many waiting)")
                protocol.transport.close()

    return GuardedH11Protocol


class RequestLimit:
    """ASGI middleware: at most ``limit`` HTTP requests in progress; one more gets a 503 at once
    (connections merely open do not count: the protocol bounds those)."""

    def __init__(self, app: Any, limit: int):
        self.app, self.limit, self.active = app, limit, 0

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.active >= self.limit:
            body = b'{"error": "the server is busy: try again in a moment"}'
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"retry-after", b"1")]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1


def server_config(
    app: Any, host: str, port: int, root_path: str = "", limits: Limits = DEFAULT_LIMITS
) -> Any:
    """The ``uvicorn.Config`` that serves ``app`` under ``limits``, trusting forwarded headers
    (scheme, client) from a proxy on this machine only (uvicorn's ``forwarded_allow_ips``)."""
    uvicorn = require("uvicorn", PURPOSE)
    return uvicorn.Config(
        RequestLimit(app, limits.max_requests), host=host, port=port, root_path=root_path,
        log_level="warning", http=protocol_class(limits), proxy_headers=True,
        timeout_keep_alive=int(limits.idle_seconds),
    )  # fmt: skip


def serve(
    app: Any, host: str, port: int, root_path: str = "", limits: Limits = DEFAULT_LIMITS
) -> None:
    """Run ``app`` until stopped (:func:`server_config`)."""
    import uvicorn

    uvicorn.Server(server_config(app, host, port, root_path, limits)).run()
