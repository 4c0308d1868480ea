"""A REST refusal read as the SPEC shapes it: ``{"error": {"code", "message"}}``."""

from __future__ import annotations

import httpx2


def error_of(response: httpx2.Response) -> str:
    """The refusal's code, its body checked to hold nothing else."""
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}
    return str(body["error"]["code"])


def error_message(response: httpx2.Response) -> str:
    return str(response.json()["error"]["message"])
