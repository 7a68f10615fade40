"""What one web visitor may cost the process that serves the pages: an ASGI middleware.

`arena tournament --web` serves its pages from the referee's own process and trio loop, and a
visitor needs no token: a hostile review (round 4, "web_sse_amplify") held 300 idle event
streams open from one client and the referee spent 35-66 s of CPU on them where the whole
tournament took 1.7 s; honest bots lost matches by timeout. So a client (the host of its TCP
peer) gets a bounded number of requests a second and of event streams open at once, and the
server a bounded number of event streams in all; past a bound a request is answered at once
with 429 (or 503 for the server-wide bound) and one line saying which bound it met.

Behind a reverse proxy every visitor would be the proxy's host, all held to one client's
bounds together. Name the proxy (`trusted_proxies`, `arena web --trusted-proxy`) and a request
that comes from it is the client its ``X-Forwarded-For`` says: the rightmost address there
that is not a trusted proxy itself (a proxy appends the address it saw; what a visitor wrote
to the left of it is not believed). A request from anywhere else is its TCP peer whatever
its headers say; a header that is not a list of addresses counts as the proxy itself.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

import structlog

from arena.buckets import TokenBuckets

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

log = structlog.get_logger("arena.web")


@dataclass(frozen=True)
class WebLimits:
    """The bounds. A browser opens one page, a few static files and one event stream per tab."""

    requests_per_s: float = 20.0  # a client's requests a second, on average...
    burst: int = 100  # ...with this many at once (a page and its files, a few tabs)
    streams_per_client: int = 8  # event streams (`/api/.../events`) one client holds open
    streams_in_all: int = 64  # event streams the server holds open, every client together
    clients_kept: int = 4096  # request buckets remembered before the full ones are dropped


FORWARDED_HOPS = 16
"""The most ``X-Forwarded-For`` entries read, from the right (the proxies' own)."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_proxies(texts: Iterable[str]) -> tuple[Network, ...]:
    """Trusted proxies given as addresses or networks (``10.0.0.1``, ``10.0.0.0/8``,
    ``::1``); ValueError naming the first that is neither."""
    networks = []
    for text in texts:
        try:
            networks.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{text!r} is not an IP address or network (e.g. 127.0.0.1, "
                             "10.0.0.0/8)") from None
    return tuple(networks)


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped if mapped is not None else address


def client_of(scope: Scope, proxies: tuple[Network, ...] = ()) -> str:
    """Who a request comes from: its TCP peer's host or, from a trusted proxy, the client
    its ``X-Forwarded-For`` names (module docstring)."""
    peer = scope.get("client")
    host = str(peer[0]) if peer else "?"
    if not proxies:
        return host

    def trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address | None) -> bool:
        return address is not None and any(address in net for net in proxies)

    if not trusted(_address(host)):
        return host
    values = [value for name, value in scope.get("headers", ()) if name == b"x-forwarded-for"]
    if not values:
        return host
    hops = b",".join(values).decode("latin-1").split(",")[-FORWARDED_HOPS:]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            return host  # not an address: the proxy answers for it
        if not trusted(address):
            return str(address)
    return host


def is_stream(path: str) -> bool:
    """Whether `path` is one of the app's server-sent event streams."""
    return path.startswith("/api/") and path.endswith("/events")


class ClientLimits:
    """`app` behind `limits` (see the module docstring)."""

    def __init__(self, app: App, limits: WebLimits = WebLimits(),
                 clock: Callable[[], float] = time.monotonic,
                 trusted_proxies: tuple[Network, ...] = ()) -> None:
        self.app = app
        self.limits = limits
        self.clock = clock
        self.trusted_proxies = trusted_proxies
        self._requests = TokenBuckets(limits.requests_per_s, limits.burst, limits.clients_kept)
        self.streams: Counter[str] = Counter()  # client -> event streams open now
        self.open_streams = 0
        self.refused = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = client_of(scope, self.trusted_proxies)
        path = str(scope.get("path", ""))
        limits = self.limits
        if not self._requests.take(client, self.clock()):
            await self._refuse(send, client, path, 429,
                               f"too many requests: at most {limits.requests_per_s:g} a second "
                               f"from one client")
            return
        if not is_stream(path):
            await self.app(scope, receive, send)
            return
        if self.streams[client] >= limits.streams_per_client:
            await self._refuse(send, client, path, 429,
                               f"too many event streams: at most {limits.streams_per_client} "
                               f"open from one client")
            return
        if self.open_streams >= limits.streams_in_all:
            await self._refuse(send, client, path, 503,
                               f"too many event streams: at most {limits.streams_in_all} open "
                               f"on this server")
            return
        self.streams[client] += 1
        self.open_streams += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open_streams -= 1
            self.streams[client] -= 1
            if self.streams[client] <= 0:
                del self.streams[client]

    async def _refuse(self, send: Send, client: str, path: str, status: int, why: str) -> None:
        self.refused += 1
        if self.refused & (self.refused - 1) == 0:  # the 1st, 2nd, 4th, 8th... refusal
            log.warning("web_client_limited", client=client, path=path, status=status,
                        detail=why, refused=self.refused)
        body = json.dumps({"error": why}).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"retry-after", b"1"), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body})
