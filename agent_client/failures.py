"""One line saying why something failed, for notices and logs (never a bare type name).

An entry that fails or falls back tells the host *why* in ``SystemNotice.error`` /
``fallback_reason``; the same text goes to the log. A vault refusal is already
``"<code>: <message>"``; an LLM endpoint's refusal shows its status and message; anything
else shows its type, its message and its cause (``Connection error.`` alone says little).

The OpenAI SDK is not imported here (0.5 s; a command without a model never needs it):
an error can be one of its types only once something imported it (``_endpoint_refusal``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TypeGuard

from shared.errors import VaultError

if TYPE_CHECKING:
    from openai import APIStatusError

MAX_CHARS = 500
MIN_SECRET_CHARS = 8  # (as the indexer's jobs take a key out of an endpoint's words)
REDACTED = "[redacted]"


# The API keys the model clients were made with (``keep_secret``): an endpoint (a proxy,
# a local server) may quote the key it refused in its words, and they go to the log and
# the notice. (The SDK's error keeps no ``Authorization`` header to read it from.)
_SECRETS: set[str] = set()


def keep_secret(key: str) -> None:
    """Take ``key`` out of every failure described from now on; one shorter than
    ``MIN_SECRET_CHARS`` (``unused``) is no secret worth a search."""
    if len(key) >= MIN_SECRET_CHARS:
        _SECRETS.add(key)


def describe_failure(exc: BaseException) -> str:
    """``exc`` (and its cause) in one line of at most ``MAX_CHARS`` characters."""
    text = _own(exc)
    if not (isinstance(exc, VaultError) or _endpoint_refusal(exc)):
        cause = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
        if cause is not None:
            text += _cause_part(text, cause)
    return " ".join(text.split())[:MAX_CHARS]


def _own(exc: BaseException) -> str:
    """``exc`` alone: a vault refusal as it is, an endpoint's refusal as status and message
    (a kept secret taken out of each)."""
    if isinstance(exc, VaultError):
        text = str(exc)
    elif _endpoint_refusal(exc):
        body = exc.body if isinstance(exc.body, dict) else {}
        message = body.get("message") or exc.message
        text = f"{type(exc).__name__} (HTTP {exc.status_code}): {message}"
    else:
        text = _typed(exc)
    for key in _SECRETS:
        text = text.replace(key, REDACTED)
    return text


def _endpoint_refusal(exc: BaseException) -> TypeGuard[APIStatusError]:
    """Whether ``exc`` is the OpenAI SDK's error for an HTTP error status. Looked up among
    the loaded modules: while the SDK was never imported, nothing raised one of its errors."""
    refusal = getattr(sys.modules.get("openai"), "APIStatusError", None)
    return isinstance(refusal, type) and isinstance(exc, refusal)


def _cause_part(text: str, cause: BaseException) -> str:
    """What the cause adds to ``text``: a wrapper that already quotes it (``MergeFailed``
    with "the LLM endpoint failed: <cause described>") would otherwise say it twice."""
    own = _own(cause)
    if own in text:
        return ""
    said = own.partition(": ")[2].strip() or str(cause).strip()
    if said and (said in text or str(cause) in text):  # its message is there, its type?
        name = type(cause).__name__
        return "" if name in text else f" ({name})"
    return f" ({own})"


def _typed(exc: BaseException) -> str:
    message = str(exc).strip()
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
