"""The 400 a request h11 cannot read gets: one a user's curl sends (raw UTF-8 in the URL)
is told how to send it."""

from __future__ import annotations

import json

import h11
import pytest

from indexer.web.connections import BUSY, TIMED_OUT, UNREADABLE
from indexer.web.http_errors import COMMON_HEADERS


def test_a_url_holding_raw_utf8_is_a_request_h11_cannot_read() -> None:
    conn = h11.Connection(h11.SERVER)
    conn.receive_data("GET /api/v1/zh-Hans/search?q=北京 HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    with pytest.raises(h11.RemoteProtocolError):
        conn.next_event()


def test_the_answer_is_json_naming_percent_encoding_and_the_size_limit() -> None:
    head, _, body = UNREADABLE.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ")
    assert f"content-length: {len(body)}".encode() in head.split(b"\r\n")
    error = json.loads(body)["error"]
    assert error["code"] == "invalid_argument"
    assert "percent-encoded" in error["message"]
    assert "--data-urlencode" in error["message"]
    assert "64 KiB" in error["message"]


@pytest.mark.parametrize("answer", [UNREADABLE, BUSY, TIMED_OUT], ids=["400", "503", "408"])
def test_the_answers_written_before_any_app_carry_every_answers_headers(answer: bytes) -> None:
    """README: "Every answer carries X-Content-Type-Options: nosniff, Referrer-Policy:
    no-referrer and refuses framing"; the protocol's own answers (a request it cannot
    read, the connection cap, a header timeout) carried none of them."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("Host", "x")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(answer)
    response = conn.next_event()
    assert isinstance(response, h11.Response)
    headers = {name.decode(): value.decode() for name, value in response.headers}
    for name, value in COMMON_HEADERS.items():
        assert headers.get(name.lower()) == value, name
