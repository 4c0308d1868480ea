"""describe_failure: a wrapper that already quotes its cause does not say it again."""

from __future__ import annotations

import httpx2
import openai

from agent_client.failures import describe_failure
from agent_client.merge.llm import MergeFailed


def _rate_limited() -> openai.RateLimitError:
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx2.Response(429, request=request)
    return openai.RateLimitError(
        "Error code: 429 - slow down", response=response, body={"message": "slow down"}
    )


def _wrapped(message: str, cause: BaseException) -> MergeFailed:
    try:
        raise MergeFailed(message) from cause
    except MergeFailed as exc:
        return exc


def test_an_endpoint_failure_names_its_cause_once() -> None:
    cause = _rate_limited()
    exc = _wrapped(f"the LLM endpoint failed: {describe_failure(cause)}", cause)
    assert describe_failure(exc) == (
        "MergeFailed: the LLM endpoint failed: RateLimitError (HTTP 429): slow down"
    )


def test_a_cause_saying_something_new_still_shows() -> None:
    other = _wrapped("the merge failed", ConnectionError("refused"))
    assert describe_failure(other) == "MergeFailed: the merge failed (ConnectionError: refused)"
    same_words = _wrapped("refused", ConnectionError("refused"))  # its type is new
    assert describe_failure(same_words) == "MergeFailed: refused (ConnectionError)"
    endpoint = _wrapped("the merge failed", _rate_limited())
    assert describe_failure(endpoint) == (
        "MergeFailed: the merge failed (RateLimitError (HTTP 429): slow down)"
    )
