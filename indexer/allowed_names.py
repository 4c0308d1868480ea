"""The extra hosts and origins a person configures (``INDEXER_ALLOWED_HOSTS``,
``INDEXER_ALLOWED_ORIGINS``), read one way by the settings and by the Host/Origin guard.

Apart from the guard (``indexer.web.host_origin``) so that the settings, which every
command reads, can refuse an entry without importing the web stack: the guard used to
drop an entry it could not read, silently, so a misspelled one (``app.example`` without
its scheme, ``http://box:8765`` as a host) left its client refused 403/421 with nothing
said at the start.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

DEFAULT_PORTS = {"http": 80, "https": 443}
ANY_PORT = -1
_ENTRY = re.compile(r"(?P<name>\[[^\]]*\]|[^:]*)(?::(?P<port>[0-9]{1,5}|\*))?")
# What a Host's name may hold (``host_origin._AUTHORITY``), and the glob's own marks.
_GLOB_NAME = re.compile(r"[A-Za-z0-9._*?\[\]!-]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


@functools.lru_cache(maxsize=256)  # (a request's names are few; parsing an IP is slow)
def canonical_name(text: str) -> str:
    """A host name in the one spelling compared: lower case, an IP address canonical."""
    text = text.lower()
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return text


@dataclass(frozen=True)
class NamePattern:
    """A configured host: a name (``*`` or a glob allowed) and a port (None: not said)."""

    name: str
    port: int | None

    def matches(self, name: str) -> bool:
        return self.name == "*" or fnmatchcase(name, self.name)


def host_pattern(entry: str) -> NamePattern | None:
    """``name``, ``name:port``, ``name:*`` or ``[v6]...``; None for anything a Host
    header could never match (a URL, a path, a space, a port past 65535)."""
    found = _ENTRY.fullmatch(entry.strip())
    if found is None or not found["name"]:
        return None
    name = found["name"]
    if name.startswith("[") and name.endswith("]"):
        try:
            name = str(ipaddress.IPv6Address(name[1:-1]))
        except ValueError:
            return None
    elif not _GLOB_NAME.fullmatch(name):
        return None
    port = found["port"]
    if port is not None and port != "*" and int(port) > 65535:
        return None
    return NamePattern(
        canonical_name(name), ANY_PORT if port == "*" else int(port) if port is not None else None
    )


def origin_pattern(entry: str) -> tuple[str, NamePattern] | None:
    """A configured origin as (scheme, host pattern), its port the scheme's default when
    none is given; None when it has no scheme, no usable host, or no port to compare
    (a scheme with no default port, ``ftp://box``)."""
    scheme, sep, rest = entry.strip().rstrip("/").partition("://")
    if not sep or not _SCHEME.fullmatch(scheme):
        return None
    pattern = host_pattern(rest)
    if pattern is None:
        return None
    port = pattern.port if pattern.port is not None else DEFAULT_PORTS.get(scheme.lower())
    if port is None:
        return None
    return scheme.lower(), NamePattern(pattern.name, port)


def check_allowed(hosts: Iterable[str], origins: Iterable[str]) -> None:
    """Refuse (ValueError, naming the variable) the first entry the guard cannot use."""
    for entry in hosts:
        if host_pattern(entry) is None:
            raise ValueError(
                f"INDEXER_ALLOWED_HOSTS: {entry!r:.80} is not a host: give name, name:port "
                "or name:* (no scheme, path or user; a port up to 65535)"
            )
    for entry in origins:
        if entry.strip() not in ("null", "*") and origin_pattern(entry) is None:
            raise ValueError(
                f"INDEXER_ALLOWED_ORIGINS: {entry!r:.80} is not an origin: give "
                "scheme://name[:port] (a port for a scheme other than http and https; "
                ":* any port), null or *"
            )
