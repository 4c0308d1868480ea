"""Asking a running indexer whether it is alive: ``GET /health`` beside its MCP URL.

Used by the CLI (``status``, ``config-snippet``) to tell a live URL file from a stale one.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request


def health_url(url: str) -> str:
    """``http://host:port/mcp`` -> ``http://host:port/health``."""
    base = url.rstrip("/")
    if base.endswith("/mcp"):
        base = base[: -len("/mcp")]
    return base + "/health"


def server_health(url: str, timeout: float = 2.0) -> dict | None:
    """The JSON of ``GET /health`` next to the MCP ``url``, or None if nothing answers."""
    try:
        with urllib.request.urlopen(health_url(url), timeout=timeout) as response:
            data = json.loads(response.read())
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("status") == "ok" else None
