"""One line saying why something failed, for notices and logs (never a bare type name).

An entry that fails or falls back tells the host *why* in ``SystemNotice.error`` /
``fallback_reason``; the same text goes to the log. A vault refusal is already
``"<code>: <message>"``; an LLM endpoint's refusal shows its status and message; anything
else shows its type, its message and its cause (``Connection error.`` alone says little).
"""

from __future__ import annotations

import openai

from shared.errors import VaultError

MAX_CHARS = 500


def describe_failure(exc: BaseException) -> str:
    """``exc`` (and its cause) in one line of at most ``MAX_CHARS`` characters."""
    if isinstance(exc, VaultError):
        text = str(exc)
    elif isinstance(exc, openai.APIStatusError):
        body = exc.body if isinstance(exc.body, dict) else {}
        message = body.get("message") or exc.message
        text = f"{type(exc).__name__} (HTTP {exc.status_code}): {message}"
    else:
        text = _typed(exc)
        cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
        if cause is not None and str(cause) and str(cause) not in text:
            text += f" ({_typed(cause)})"
    return " ".join(text.split())[:MAX_CHARS]


def _typed(exc: BaseException) -> str:
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
