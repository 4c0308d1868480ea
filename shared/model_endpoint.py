"""The endpoint both sides' OpenAI SDK clients call: never an empty URL.

Given no base URL, the SDK reads ``OPENAI_BASE_URL``, and took the empty line that
``deploy/env.example`` holds for "the default" as the URL itself: every call failed
("Request URL is missing an 'http://' or 'https://' protocol"), the writer fell back,
summaries and maintenance failed as a connection error. An empty value is none here.
"""

from __future__ import annotations

import os
import urllib.parse

# The SDK's own default (``openai.AsyncOpenAI``), named: an empty variable means it
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def base_url(configured: str | None) -> str:
    """The endpoint to call: ``configured``, else ``OPENAI_BASE_URL``, else the SDK's
    default (a value of white space alone is none)."""
    for url in (configured, os.environ.get("OPENAI_BASE_URL")):
        if url and url.strip():
            return url.strip()
    return DEFAULT_BASE_URL


def usable_url(setting: str, value: str) -> str:
    """``value`` of the base-URL ``setting`` as given, once it is a URL the SDK's client
    can call (``http://[::1``, a port past 65535 or ``ftp://x`` failed every call later,
    with a traceback); ``""`` or white space, the default, is ``""``. ``ValueError``
    says what is wrong."""
    if not value.strip():
        return ""  # (white space alone is none: the SDK's default)
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port  # noqa: B018 (raises ValueError for a port out of range)
    except ValueError as exc:
        raise ValueError(f"{setting} is not a usable URL ({exc}): {value!r}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{setting} must be an http:// or https:// URL with a host: {value!r}")
    return value
