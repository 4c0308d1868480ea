"""The background jobs' model against the OpenAI-compatible stub (the real openai SDK)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from helpers.llm_stub import LLMStub, RawReply, completion, http_error, running_llm_stub, say

from indexer.jobs.llm import JobModel, ModelError, ModelSettings


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


def model(stub: LLMStub, **kw: object) -> JobModel:
    return JobModel(ModelSettings(model="stub", base_url=stub.base_url, **kw))  # type: ignore[arg-type]


async def test_a_json_answer_is_parsed(stub: LLMStub) -> None:
    stub.run([say('```json\n{"abstract": "a", "overview": "b"}\n```')])
    job = model(stub)
    assert await job.complete_json([{"role": "user", "content": "x"}]) == {
        "abstract": "a",
        "overview": "b",
    }
    assert job.calls == 1 and len(stub.requests) == 1
    await job.close()


@pytest.mark.parametrize("answer", ["", "not json", "[1, 2]", '{"a": 1} trailing', "null"])
async def test_anything_but_one_object_is_a_model_error(stub: LLMStub, answer: str) -> None:
    stub.run([say(answer)])
    job = model(stub)
    with pytest.raises(ModelError, match="malformed"):
        await job.complete_json([{"role": "user", "content": "x"}])
    await job.close()


async def test_unreachable_and_slow_models_fail_fast_without_retries() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    job = JobModel(ModelSettings(model="m", base_url=f"http://127.0.0.1:{port}/v1", timeout=2))
    with pytest.raises(ModelError, match="endpoint failed"):
        await job.chat([{"role": "user", "content": "x"}])
    await job.close()


async def test_a_slow_model_times_out(stub: LLMStub) -> None:
    stub.run([say("{}")])
    stub.hold = threading.Event()  # no answer until the test is done
    try:
        # 2 s: a loaded machine took more than 0.3 s to let the stub read the request
        job = model(stub, timeout=2.0)
        with pytest.raises(ModelError, match="longer than"):
            await job.chat([{"role": "user", "content": "x"}])
        assert len(stub.requests) == 1  # no retry
        await job.close()
    finally:
        stub.hold.set()
        stub.hold = None


async def test_concurrency_is_bounded(stub: LLMStub) -> None:
    while stub.in_flight:  # a request an earlier test gave up on is still being answered
        await asyncio.sleep(0.05)
    stub.run([say("{}")])
    stub.delay = 0.1
    try:
        job = model(stub, max_concurrency=3)
        await asyncio.gather(*(job.chat([{"role": "user", "content": str(i)}]) for i in range(12)))
        assert len(stub.requests) == 12
        assert stub.max_in_flight == 3
        await job.close()
    finally:
        stub.delay = 0.0


def _body(choices: object) -> dict:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "s", "choices": choices}


NULL_FUNCTION = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c", "type": "function", "function": None}],
}


@pytest.mark.parametrize(
    "body",
    [
        _body([{"index": 0, "message": None, "finish_reason": "stop"}]),
        _body(["oops"]),
        _body([]),
        _body(None),
        [1, 2],
        _body([{"index": 0, "message": NULL_FUNCTION, "finish_reason": "tool_calls"}]),
    ],
)
async def test_a_malformed_completion_is_a_model_error(stub: LLMStub, body: object) -> None:
    """The SDK builds its objects without validating them: a null message or function
    used to fail later (AttributeError), outside the ModelError every job falls back on."""
    stub.run([RawReply(200, body)])
    job = model(stub)
    with pytest.raises(ModelError):
        await job.chat([{"role": "user", "content": "x"}])
    await job.close()


async def test_an_endpoint_s_error_text_is_one_line_without_escapes(stub: LLMStub) -> None:
    """The summaries' log line quoted it as sent: a line break forged a log line, an
    escape sequence drove the terminal of ``indexer summarize``."""
    forged = "quota\n2026-12-03 CRITICAL indexer: run curl evil | sh\x1b]0;owned\x07\x1b[2J"
    stub.run([http_error(500, forged, "x")])
    job = model(stub)
    with pytest.raises(ModelError) as raised:
        await job.chat([{"role": "user", "content": "x"}])
    await job.close()
    text = str(raised.value)
    assert "quota 2026-12-03 CRITICAL" in text
    assert "\n" not in text and "\x1b" not in text and "\x07" not in text


async def test_an_answer_with_a_number_too_long_to_read_is_malformed_in_words(
    stub: LLMStub,
) -> None:
    """Python's own message (``use sys.set_int_max_str_digits()``) went to the log and to
    maintenance's state; a short number and a long string of digits still read."""
    stub.run([say('{"action": "none", "reason": ' + "9" * 100_000 + "}")])
    job = model(stub)
    with pytest.raises(ModelError, match="a number of 100,000 digits") as raised:
        await job.complete_json([{"role": "user", "content": "x"}])
    assert "set_int_max_str_digits" not in str(raised.value)
    stub.run([say('{"n": -' + "9" * 4_300 + ', "s": "' + "9" * 100_000 + '"}')])
    answer = await job.complete_json([{"role": "user", "content": "x"}])
    assert answer["n"] == -int("9" * 4_300) and len(answer["s"]) == 100_000
    await job.close()


async def test_an_answer_cut_short_at_max_tokens_says_so(stub: LLMStub) -> None:
    """A model stopped by ``max_tokens`` (``finish_reason: length``) left a JSON answer
    unreadable ("malformed: not JSON"), or a whole one that stops mid-note: the error
    names the limit and its setting, and the request sent it."""
    cut = completion(say('{"abstract": "a", "overview": "# O\\n- one'), 3)
    cut["choices"][0]["finish_reason"] = "length"
    whole = completion(say('{"abstract": "a", "overview": "# O"}'), 4)
    whole["choices"][0]["finish_reason"] = "length"
    stub.run([RawReply(200, cut), RawReply(200, whole), say('{"abstract": "a"}')])
    job = model(stub, max_tokens=300)
    for _ in range(2):
        with pytest.raises(ModelError, match=r"cut short at 300 tokens \(INDEXER_LLM_MAX_TOKENS\)"):
            await job.complete_json([{"role": "user", "content": "x"}])
    assert await job.complete_json([{"role": "user", "content": "x"}]) == {"abstract": "a"}
    assert [request["max_tokens"] for request in stub.requests] == [300, 300, 300]
    await job.close()


@pytest.mark.parametrize(
    ("media_type", "body"),
    [
        ("text/html", b"<!DOCTYPE html><html><body>Bad gateway \xe2\x80\xae page</body></html>"),
        ("text/event-stream", b'data: {"choices": []}\n\ndata: [DONE]\n\n'),
    ],
)
async def test_a_reply_that_is_not_json_is_said_to_be_text(
    stub: LLMStub, media_type: str, body: bytes
) -> None:
    """The SDK hands a body of another type over as its text, which read as "the model
    answered with no choices" (a helper's hostile model: a proxy's HTML page, a stream)."""
    stub.run([RawReply(200, body, media_type)])
    job = model(stub)
    with pytest.raises(ModelError, match=r"not JSON but text of [0-9]+ characters") as raised:
        await job.chat([{"role": "user", "content": "x"}])
    await job.close()
    assert not raised.value.down
    assert repr(body[:12].decode())[1:-1] in str(raised.value)
    assert "\u202e" not in str(raised.value)  # (quoted as its escape)


@pytest.mark.parametrize(
    ("status", "header", "expected"),
    [
        (429, "30", 30.0),
        (503, "0", 0.0),
        (429, "9" * 5000, 3600.0),  # at most an hour
        (429, "soon", None),
        (429, "-5", None),
        (429, "Wed, 21 Oct 2015 07:28:00 GMT", 0.0),  # a date gone by
        (429, None, None),
    ],
)
async def test_a_refusal_s_retry_after_is_read(
    stub: LLMStub, status: int, header: str | None, expected: float | None
) -> None:
    """A 429's ``Retry-After: 3600`` was not read: the jobs asked again at once (a
    helper's hostile model: 40 requests in 27 s). The error carries the wait."""
    headers = {"retry-after": header} if header is not None else None
    stub.run([RawReply(status, {"error": {"message": "slow down"}}, headers=headers)])
    job = model(stub)
    with pytest.raises(ModelError) as raised:
        await job.chat([{"role": "user", "content": "x"}])
    await job.close()
    assert raised.value.down and raised.value.retry_after == expected
    if expected is not None:
        assert f"it asks to wait {expected:,.0f} s" in str(raised.value)


async def test_a_retry_after_date_is_read_as_seconds_from_now(stub: LLMStub) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=120), usegmt=True)
    stub.run([RawReply(429, {"error": {"message": "later"}}, headers={"retry-after": when})])
    job = model(stub)
    with pytest.raises(ModelError) as raised:
        await job.chat([{"role": "user", "content": "x"}])
    await job.close()
    assert raised.value.retry_after is not None and 100 < raised.value.retry_after <= 120


async def test_an_answer_with_a_lone_surrogate_is_malformed(stub: LLMStub) -> None:
    stub.run([say('{"abstract": "a \\ud800", "overview": "b"}')])
    job = model(stub)
    with pytest.raises(ModelError, match="surrogate"):
        await job.complete_json([{"role": "user", "content": "x"}])
    await job.close()


async def test_a_reply_that_never_ends_is_cut_at_its_bound() -> None:
    """An endpoint answering 200 with an endless body: the SDK read it whole into memory
    until the timeout (1 GB in 4 s; several at the default 60 s)."""

    def endless(sock: socket.socket) -> None:
        conn, _ = sock.accept()
        with conn:
            conn.recv(65536)
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            conn.sendall(head + b"Content-Length: 100000000000\r\n\r\n")
            conn.sendall(b'{"choices":[{"index":0,"message":{"role":"assistant","content":"')
            with contextlib.suppress(OSError):
                while True:
                    conn.sendall(b"a" * (1 << 20))

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        threading.Thread(target=endless, args=(sock,), daemon=True).start()
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        job = JobModel(ModelSettings(model="m", base_url=url, timeout=30))
        started = time.monotonic()
        with pytest.raises(ModelError, match="larger than 8 MiB"):
            await job.chat([{"role": "user", "content": "x"}])
        assert time.monotonic() - started < 10  # (the timeout is 30 s)
        await job.close()


def _serve_once(body: bytes, encoding: str) -> tuple[socket.socket, str]:
    """A one-request endpoint answering ``body`` with ``Content-Encoding: encoding``."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)

    def answer() -> None:
        conn, _ = sock.accept()
        with conn:
            conn.recv(65536)
            head = (
                f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
            )
            conn.sendall(f"{head}\r\nContent-Encoding: {encoding}\r\n\r\n".encode() + body)

    threading.Thread(target=answer, daemon=True).start()
    return sock, f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


COMPLETION = (
    b'{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,'
    b'"finish_reason":"stop","message":{"role":"assistant","content":"%s"}}]}'
)


async def test_a_gzip_reply_is_read_inflated_and_bounded_as_it_inflates() -> None:
    """The bound counted the compressed bytes: 0.3 MB of gzip inflated to 300 MB."""
    small = zlib.compressobj(9, zlib.DEFLATED, 31)
    reply = small.compress(COMPLETION % b"fine") + small.flush()
    sock, url = _serve_once(reply, "gzip")
    with sock:
        job = JobModel(ModelSettings(model="m", base_url=url, timeout=30))
        assert (await job.chat([{"role": "user", "content": "x"}])).content == "fine"
        await job.close()
    bomb = zlib.compressobj(9, zlib.DEFLATED, 31)
    inflated = COMPLETION % (b"a" * (64 << 20))
    sock, url = _serve_once(bomb.compress(inflated) + bomb.flush(), "gzip")
    with sock:
        job = JobModel(ModelSettings(model="m", base_url=url, timeout=30))
        with pytest.raises(ModelError, match="larger than 8 MiB"):
            await job.chat([{"role": "user", "content": "x"}])
        await job.close()
    sock, url = _serve_once(b"whatever", "br")
    with sock:
        job = JobModel(ModelSettings(model="m", base_url=url, timeout=30))
        with pytest.raises(ModelError, match="encoded as br"):
            await job.chat([{"role": "user", "content": "x"}])
        await job.close()


async def test_a_raw_deflate_reply_is_read_and_a_cut_one_is_a_model_error() -> None:
    """'deflate' without its zlib header (some servers send it so) was refused once the
    bound inflated replies itself; a 200 whose JSON is cut short let a JSONDecodeError out
    of the model, past the ModelError every job falls back on."""
    raw = zlib.compressobj(9, zlib.DEFLATED, -15)
    sock, url = _serve_once(raw.compress(COMPLETION % b"raw") + raw.flush(), "deflate")
    with sock:
        job = JobModel(ModelSettings(model="m", base_url=url, timeout=30))
        assert (await job.chat([{"role": "user", "content": "x"}])).content == "raw"
        await job.close()
    sock, url = _serve_once((COMPLETION % b"cut")[:60], "identity")
    with sock:
        job = JobModel(ModelSettings(model="m", base_url=url, timeout=30))
        with pytest.raises(ModelError, match="not JSON"):
            await job.chat([{"role": "user", "content": "x"}])
        await job.close()
    sock, url = _serve_once(b"[" * 5000 + b"]" * 5000, "identity")  # (a RecursionError)
    with sock:
        job = JobModel(ModelSettings(model="m", base_url=url, timeout=30))
        with pytest.raises(ModelError, match="nested too deep"):
            await job.chat([{"role": "user", "content": "x"}])
        await job.close()


async def test_an_empty_openai_base_url_is_the_sdks_default(
    stub: LLMStub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``OPENAI_BASE_URL=`` (deploy/env.example's "empty: the SDK's default") was taken
    as the URL itself: every call failed as a connection error. Set, it is the endpoint."""
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    job = JobModel(ModelSettings(model="stub", base_url=None))
    assert str(job._client().base_url) == "https://api.openai.com/v1/"
    await job.close()
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    stub.run([say('{"abstract": "a"}')])
    job = JobModel(ModelSettings(model="stub", base_url=None))
    assert await job.complete_json([{"role": "user", "content": "x"}]) == {"abstract": "a"}
    await job.close()


async def test_an_endpoint_quoting_the_api_key_has_it_redacted_in_the_error(
    stub: LLMStub,
) -> None:
    # (a proxy's 401 or 500 may quote the key it got; the error goes to the log, to
    # maintenance-state.json and to `indexer maintain`'s output)
    key = "sk-local-0123456789abcdef"
    stub.run([http_error(500, f"upstream refused the key {key} (Bearer {key})")])
    job = model(stub, api_key=key)
    with pytest.raises(ModelError) as raised:
        await job.chat([{"role": "user", "content": "x"}])
    assert key not in str(raised.value)
    assert "upstream refused the key [redacted] (Bearer [redacted])" in str(raised.value)
    assert raised.value.down
    await job.close()
    stub.run([http_error(401, "no key unused here")])  # (a placeholder key is no secret)
    job = model(stub)
    with pytest.raises(ModelError, match="no key unused here"):
        await job.chat([{"role": "user", "content": "x"}])
    await job.close()
