"""MCP over raw HTTP, as a client of the 2025 protocol (with sessions) sends it: the
headers and the ``initialize`` request the hostile and session tests start from."""

from __future__ import annotations

from typing import Any

PROTOCOL = "2025-11-25"
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "Mcp-Protocol-Version": PROTOCOL,
}


def initialize(client_name: str) -> dict[str, Any]:
    """The ``initialize`` request (id 1) of a client named ``client_name``."""
    client = {"name": client_name, "version": "0"}
    params = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": client}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
