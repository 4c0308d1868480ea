"""Exact ``Host`` and ``Origin`` matching, in front of fastmcp's DNS-rebinding guard.

fastmcp's ``HostOriginGuardMiddleware`` (fastmcp 4.2, ``server/http.py``) compares
names only, and has no exact mode: ``_normalize_host`` keeps what comes before a Host's
one colon (``127.0.0.1:8765@evil.com`` is ``127.0.0.1``, ``localhost:1`` is
``localhost``), and any Origin whose host is a loopback name passes on a loopback Host
whatever its port and scheme (``http://127.0.0.1:8765.evil.com``: ``urlsplit`` says its
hostname is ``127.0.0.1``; ``http://localhost:3000`` is another program's page). The
MCP library's own check (``mcp.server.transport_security``, prefix matches) is turned
off by fastmcp. The guard wraps every route of the app (``/mcp``, ``/api/v1``, ``/ui``,
``/health``), and so does ``ExactHostOrigin``, which refuses first, in the guard's own
words (``GuardRefusalsAsJson`` answers them as the API's error body).

What passes:

- ``Host``: exactly one, ``name[:port]`` with nothing else (no user, path, space, empty
  port); the name in lower case, an IPv6 address in brackets. A loopback name
  (``127.0.0.1``, ``localhost``, ``::1``) or the server's own address, at the port it
  serves (a Host without a port means the scheme's default: 80). A configured extra host
  (``INDEXER_ALLOWED_HOSTS``): ``name:port`` that one port (``name:*`` any); ``name``
  the served port or no port (a reverse proxy passing its own Host on); a glob name
  (``*.example.com``, ``*``) as fastmcp reads it. A trailing dot (``localhost.``) makes
  another name: refused unless configured so.
- ``Origin``: none (not a browser), or exactly one ``scheme://name[:port]`` that is the
  request's own origin (its scheme and Host), a loopback name at the served port with
  the request's scheme, or a configured origin (``INDEXER_ALLOWED_ORIGINS``; no port
  means the scheme's default, as in an Origin; ``:*`` any port; ``*`` any origin).
  ``null`` (a sandboxed frame, a file) only when configured as ``null``.

The configured entries are read by ``indexer.allowed_names``, where the settings refuse
one that could never match at the start.

A server whose scope names no port (no TCP socket) takes a loopback name at any port.
What passes here meets fastmcp's guard next, which stays on: a request passes both.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from indexer.allowed_names import (
    ANY_PORT,
    DEFAULT_PORTS,
    canonical_name,
    host_pattern,
    origin_pattern,
)

LOOPBACK = ("127.0.0.1", "localhost", "::1")  # fastmcp's DEFAULT_HOSTS
# RFC 3986 authority without userinfo: a bracketed IPv6 address or a plain name.
_AUTHORITY = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9._-]+))(?::(?P<port>[0-9]{1,5}))?"
)
_ORIGIN = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<authority>[^/?#@\s]+)")


@dataclass(frozen=True)
class Authority:
    """A parsed ``name[:port]``: ``port`` None when the text had none."""

    name: str
    port: int | None


@dataclass(frozen=True)
class Origin:
    scheme: str
    name: str
    port: int  # the scheme's default when the Origin had none


def parse_authority(text: str) -> Authority | None:
    """``name[:port]`` as a Host header carries it, or None for anything else."""
    found = _AUTHORITY.fullmatch(text)
    if found is None:
        return None
    if found["v6"] is not None:
        try:
            name = str(ipaddress.IPv6Address(found["v6"]))
        except ValueError:
            return None
    else:
        name = canonical_name(found["name"])
    port = int(found["port"]) if found["port"] is not None else None
    if port is not None and port > 65535:
        return None
    return Authority(name, port)


def parse_origin(text: str) -> Origin | None:
    """``scheme://name[:port]`` as an Origin header carries it (no path, not even
    ``/``), or None for anything else (``null`` included)."""
    found = _ORIGIN.fullmatch(text)
    if found is None:
        return None
    scheme = found["scheme"].lower()
    authority = parse_authority(found["authority"])
    if authority is None:
        return None
    port = authority.port if authority.port is not None else DEFAULT_PORTS.get(scheme)
    if port is None:  # (a scheme with no default port, and none given)
        return None
    return Origin(scheme, authority.name, port)


class HostOriginRules:
    """The configured extra hosts and origins, parsed once; ``host_allowed`` and
    ``origin_allowed`` decide one request from its scope's served address."""

    def __init__(self, hosts: Iterable[str], origins: Iterable[str]) -> None:
        self.hosts = [p for p in map(host_pattern, hosts) if p is not None]
        origins = list(origins)
        self.null_origin = any(entry.strip() == "null" for entry in origins)
        self.any_origin = any(entry.strip() == "*" for entry in origins)
        self.origins = [p for p in map(origin_pattern, origins) if p is not None]

    def host_allowed(self, host: Authority, scheme: str, server: tuple[str, int] | None) -> bool:
        served_port = server[1] if server else None
        port = host.port if host.port is not None else DEFAULT_PORTS.get(scheme)
        ours = set(LOOPBACK)
        if server and not _unspecified(server[0]):
            ours.add(canonical_name(server[0]))
        if host.name in ours and (served_port is None or port == served_port):
            return True
        for pattern in self.hosts:
            if not pattern.matches(host.name):
                continue
            if pattern.port == ANY_PORT or (pattern.port is not None and port == pattern.port):
                return True
            if pattern.port is None and (host.port is None or port == served_port):
                return True
        return False

    def origin_allowed(
        self, origin: Origin, host: Authority, scheme: str, server: tuple[str, int] | None
    ) -> bool:
        own_port = host.port if host.port is not None else DEFAULT_PORTS.get(scheme)
        if (origin.scheme, origin.name, origin.port) == (scheme, host.name, own_port):
            return True  # the request's own origin (its Host passed already)
        served_port = server[1] if server else None
        if origin.scheme == scheme and origin.name in LOOPBACK and origin.port == served_port:
            return True  # this server under another loopback name
        if self.any_origin:
            return True
        for origin_scheme, pattern in self.origins:
            if origin_scheme != origin.scheme or not pattern.matches(origin.name):
                continue
            if pattern.port in (ANY_PORT, origin.port):
                return True
        return False


@functools.lru_cache(maxsize=16)
def _unspecified(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_unspecified
    except ValueError:
        return False


def _values(scope: Scope, header: bytes) -> list[str]:
    return [v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == header]


class ExactHostOrigin:
    """ASGI middleware: refuse a request whose Host or Origin is not exactly one this
    server answers to (``HostOriginRules``), as fastmcp's guard refuses (421, 403)."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str], origins: Iterable[str]) -> None:
        self.app = app
        self.rules = HostOriginRules(hosts, origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> Response | None:
        scheme = str(scope.get("scheme", "http")).lower()
        server = scope.get("server")
        served = (str(server[0]), int(server[1])) if server and server[1] is not None else None
        hosts = _values(scope, b"host")
        host = parse_authority(hosts[0].strip()) if len(hosts) == 1 else None
        if host is None or not self.rules.host_allowed(host, scheme, served):
            return Response("Misdirected Request", status_code=421)
        origins = _values(scope, b"origin")
        if not origins:
            return None
        if len(origins) == 1:
            text = origins[0].strip()
            if text == "null":
                return None if self.rules.null_origin else _forbidden()
            origin = parse_origin(text)
            if origin is not None and self.rules.origin_allowed(origin, host, scheme, served):
                return None
        return _forbidden()


def _forbidden() -> Response:
    return Response("Forbidden Origin", status_code=403)
