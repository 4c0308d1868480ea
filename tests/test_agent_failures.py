"""describe_failure: a wrapper that already quotes its cause does not say it again."""

from __future__ import annotations

import httpx2
import openai

from agent_client.failures import describe_failure, keep_secret
from agent_client.merge.llm import MergeFailed, make_llm
from agent_client.settings import LLMSettings


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


def test_the_key_an_endpoint_quotes_is_taken_out() -> None:
    """A proxy that quotes the key it refused: the key the request sent never reaches
    the notice or the log once a client was made with it (``make_llm``); a placeholder
    key (``unused``) is no secret."""
    key = "sk-proj-0123456789abcdef"
    make_llm(LLMSettings(model="m", base_url="http://127.0.0.1:9/v1", api_key=key))
    keep_secret("unused")
    for sent, said in ((key, "[redacted]"), ("unused", "unused")):
        request = httpx2.Request(
            "POST",
            "http://127.0.0.1:9/v1/chat/completions",
            headers={"Authorization": f"Bearer {sent}"},
        )
        response = httpx2.Response(401, request=request)
        refusal = openai.AuthenticationError(
            f"Error code: 401 - key {sent} refused",
            response=response,
            body={"message": f"upstream refused the key {sent} (Bearer {sent})"},
        )
        described = describe_failure(
            _wrapped(f"the LLM endpoint failed: {describe_failure(refusal)}", refusal)
        )
        assert described == (
            "MergeFailed: the LLM endpoint failed: AuthenticationError (HTTP 401): upstream"
            f" refused the key {said} (Bearer {said})"
        )
