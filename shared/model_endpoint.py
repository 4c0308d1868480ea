"""The endpoint both sides' OpenAI SDK clients call: never an empty URL.

Given no base URL, the SDK reads ``OPENAI_BASE_URL``, and took the empty line that
``deploy/env.example`` holds for "the default" as the URL itself: every call failed
("Request URL is missing an 'http://' or 'https://' protocol"), the writer fell back,
summaries and maintenance failed as a connection error. An empty value is none here.
"""

from __future__ import annotations

import os

# The SDK's own default (``openai.AsyncOpenAI``), named: an empty variable means it
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def base_url(configured: str | None) -> str:
    """The endpoint to call: ``configured``, else ``OPENAI_BASE_URL``, else the SDK's
    default (a value of white space alone is none)."""
    for url in (configured, os.environ.get("OPENAI_BASE_URL")):
        if url and url.strip():
            return url.strip()
    return DEFAULT_BASE_URL
