"""The optional model of the indexer's background jobs (summaries, maintenance).

One OpenAI-compatible chat model (``INDEXER_LLM_*``), off by default: without a model
setting nothing is ever called (and ``openai`` is not even imported). Calls are bounded:
at most ``max_concurrency`` in flight across all jobs, each within ``timeout`` seconds,
and never retried inside a job (``max_retries=0``): a failure is the caller's to handle,
by a deterministic fallback or by trying again at the next run. Every failure, of the
endpoint or of the answer, is one exception type, ``ModelError``.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from indexer.index.abstract import one_line
from shared.model_endpoint import base_url
from shared.model_output import parse_json_object
from shared.reply_bound import REQUEST_HEADERS, ReplyTooLarge, bound_reply, too_large
from shared.retry_after import retry_after_seconds
from shared.tool_turn import MalformedReply, reply_message

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionMessage


MAX_ERROR_CHARS = 1000  # of a model error's text (the endpoint's words with it)
# A key shorter than this is no secret worth a search ("unused", "none", "x"): its
# letters in an endpoint's words are left as they are.
MIN_SECRET_CHARS = 8
REDACTED = "[redacted]"
_DOWN_STATUSES = frozenset({401, 403, 404, 408, 429})  # (and every 5xx)


class ModelError(Exception):
    """The model could not be reached, timed out, or answered something unusable.

    Its text is one line: it quotes the endpoint's own words, which went to the log as
    sent (a line break forged a log line; an escape sequence drove a terminal). ``down``:
    the endpoint gave no answer at all (timed out, unreachable, refused every request), so
    the next call, whatever it asks, will most likely fail the same way; ``retry_after``:
    the seconds its ``Retry-After`` header asked callers to wait (a 429 or 503), if any."""

    def __init__(
        self, message: str, *, down: bool = False, retry_after: float | None = None
    ) -> None:
        text = message.encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(one_line(text)[:MAX_ERROR_CHARS])
        self.down = down
        self.retry_after = retry_after


@dataclass(frozen=True)
class ModelSettings:
    """How to reach the model; built from ``INDEXER_LLM_*`` by ``indexer.settings``."""

    model: str
    base_url: str | None = None
    api_key: str = "unused"
    max_concurrency: int = 10
    timeout: float = 60.0
    max_tokens: int = 2048


class JobModel:
    """The model, shared by every job of one process; safe to use from several loops."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        # One bound for the whole process (jobs may run on different event loops).
        self._slots = threading.BoundedSemaphore(max(1, settings.max_concurrency))
        self._clients: dict[int, AsyncOpenAI] = {}
        self._lock = threading.Lock()
        self.calls = 0  # requests sent (for status and tests)

    @property
    def name(self) -> str:
        return self.settings.model

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        timeout: float | None = None,
        max_tokens: int | None = None,
    ) -> ChatCompletionMessage:
        """One chat completion (the caller runs any tool loop); ``ModelError`` on failure."""
        import openai

        limit = timeout if timeout is not None else self.settings.timeout
        await self._acquire(limit)
        try:
            self.calls += 1
            kwargs: dict[str, Any] = {
                "model": self.settings.model,
                "messages": messages,
                "max_tokens": max_tokens or self.settings.max_tokens,
            }
            if tools:
                kwargs["tools"] = tools
            async with asyncio.timeout(limit):
                response = await self._client().chat.completions.create(**kwargs)
        except TimeoutError:
            raise ModelError(f"the model took longer than {limit:g} s", down=True) from None
        except (ReplyTooLarge, openai.OpenAIError) as exc:
            cut = too_large(exc)
            if cut is not None:
                raise ModelError(str(cut)) from None
            text = self._without_key(f"the model endpoint failed: {type(exc).__name__}: {exc}")
            wait = retry_after(exc)
            if wait is not None:
                text += f" (it asks to wait {wait:,.0f} s)"
            raise ModelError(text, down=_is_down(exc), retry_after=wait) from None
        except ValueError as exc:  # a 200 whose JSON is cut short: the SDK lets it out
            raise ModelError(f"the model's reply is not JSON ({exc})") from None
        except RecursionError:  # (nested thousands deep: json's parser gives up)
            raise ModelError("the model's reply is JSON nested too deep to read") from None
        finally:
            self._slots.release()
        message = _message_of(response)
        if getattr(response.choices[0], "finish_reason", None) == "length":
            raise ModelError(
                f"the model's answer was cut short at {kwargs['max_tokens']:,} tokens"
                " (INDEXER_LLM_MAX_TOKENS): a JSON answer or a note cut there is unusable"
            )
        return message

    async def complete_json(
        self, messages: list[dict[str, Any]], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Ask for one JSON object and parse it; ``ModelError`` for anything else."""
        message = await self.chat(messages, timeout=timeout)
        try:
            return parse_json_object(message.content or "")
        except ValueError as exc:
            raise ModelError(f"malformed answer: {exc}") from None

    def _without_key(self, text: str) -> str:
        """``text`` without the API key: an endpoint (a proxy, a local server) may quote
        the key it refused in its error, and that error goes to the log, to the state
        file and to ``indexer maintain``'s output."""
        key = self.settings.api_key
        return text.replace(key, REDACTED) if len(key) >= MIN_SECRET_CHARS else text

    async def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()

    async def _acquire(self, timeout: float) -> None:
        """Wait for a free slot without blocking the event loop (a slot taken after the
        caller gave up is given back)."""
        if self._slots.acquire(blocking=False):
            return
        waiting = asyncio.ensure_future(asyncio.to_thread(self._slots.acquire, True, timeout))
        try:
            acquired = await asyncio.shield(waiting)
        except asyncio.CancelledError:
            waiting.add_done_callback(self._give_back)
            raise
        if not acquired:
            raise ModelError(f"no model slot free within {timeout:g} s", down=True)

    def _give_back(self, waiting: asyncio.Future[bool]) -> None:
        if not waiting.cancelled() and waiting.exception() is None and waiting.result():
            self._slots.release()

    def _client(self) -> AsyncOpenAI:
        """One SDK client per event loop (an httpx client is bound to its loop)."""
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient

        key = id(asyncio.get_running_loop())
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = AsyncOpenAI(
                    base_url=base_url(self.settings.base_url),
                    api_key=self.settings.api_key,
                    timeout=self.settings.timeout,
                    max_retries=0,
                    http_client=DefaultAsyncHttpxClient(
                        headers=REQUEST_HEADERS, event_hooks={"response": [bound_reply]}
                    ),
                )
                self._clients[key] = client
            return client


def _is_down(exc: Exception) -> bool:
    """Whether an SDK error says the endpoint answers no request now (unreachable, the
    key refused, rate-limited, failing) rather than refusing this one (400, 413, 422: a
    prompt too long for it, say)."""
    import openai

    if isinstance(exc, openai.APIConnectionError):  # (its timeout too)
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in _DOWN_STATUSES or status >= 500)


def retry_after(exc: Exception) -> float | None:
    """The seconds an error response's ``Retry-After`` asks for (``shared.retry_after``)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return retry_after_seconds(headers.get("retry-after") if headers is not None else None)


def _message_of(response: Any) -> ChatCompletionMessage:
    """The first choice's message, checked (``reply_message``): a ``ModelError`` else."""
    try:
        return reply_message(response)  # type: ignore[no-any-return]
    except MalformedReply as exc:
        raise ModelError(str(exc)) from None
