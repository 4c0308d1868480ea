"""Connections a client cannot hold forever: a bounded number, and time limits to send.

uvicorn's HTTP/1.1 protocol waits for a request's headers and body as long as the
client likes and accepts connections until the process has no file descriptor left
(then asyncio logs a traceback per failed accept, and even ``/health`` stops
answering). ``guarded_protocol(limits)`` is uvicorn's h11 protocol with:

- a cap on open connections: at the cap, the connection idle (or still sending its
  headers) for the longest is dropped to make room; if every one is busy with a
  request, the new one gets a 503 and is closed;
- a header timeout: a request's headers must arrive within ``header_timeout`` seconds
  of the connection (or of their first byte on a kept-alive connection), else the
  connection is closed (with a 408 if anything was sent);
- a body timeout: a body must keep arriving (no ``body_timeout`` seconds without a
  byte, time during which the server itself holds off reading aside) and be complete
  within ``BODY_ROUNDS`` such periods, else the connection is closed and the request
  sees a disconnect;
- a body rate: after a grace (``BODY_GRACE``, at most ``body_timeout``), a body must
  have arrived at ``min_body_rate`` bytes a second on average, else it is closed as
  above. Four clients declaring 1 MB and sending a byte every 20 s held the four places
  for large bodies (``limits.RequestLimits``) for 4 body timeouts, and every large
  write waited behind them; now they are cut after the grace;
- a read timeout: a client must take its answer, no ``body_timeout`` seconds with the
  answer held up (the transport's buffer full), else the connection is cut. A client
  that never read kept its request counted in flight (64 such: every call a 503) and
  its answer in memory, past the connection cap (a connection ``close``d waits to send
  its buffer: the ones dropped with an answer unsent are ``abort``ed).

The cap stays below the process's descriptor limit, with room (``RESERVED_FDS``) for
the vaults, the index and one accept burst (``BACKLOG``, uvicorn's ``backlog``).
Time during which the server holds off reading (a body waiting for its turn, unread)
counts against neither the body timeout's rounds of silence nor the rate.
"""

from __future__ import annotations

import asyncio
import logging
import re
import resource
import time
from typing import Any, Literal

import h11
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.h11_impl import H11Protocol

from indexer.index.query_parse import MAX_QUERY_BYTES
from indexer.settings import ServerLimits
from indexer.vault.scan import MAX_PATTERN_CHARS
from indexer.web.http_errors import COMMON_HEADERS

log = logging.getLogger("indexer.web")

# The headers every answer carries (``http_errors.COMMON_HEADERS``), on the answers this
# protocol writes itself, before any app sees the request
_COMMON = "".join(f"{name.lower()}: {value}\r\n" for name, value in COMMON_HEADERS.items())
_BUSY_BODY = b'{"error": {"code": "unavailable", "message": "too many connections; retry soon"}}'
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b"connection: close\r\nretry-after: 1\r\n"
    + f"{_COMMON}content-length: {len(_BUSY_BODY)}\r\n\r\n".encode()
    + _BUSY_BODY
)
TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\nconnection: close\r\n"
    + f"{_COMMON}content-length: 0\r\n\r\n".encode()
)
# A request h11 cannot read: malformed (a URL holding raw UTF-8, as `curl "...?q=北京"`
# sends it, among them), or its line and headers longer than this (a query string of
# 10 KB, search's limit, is 30 KB percent-encoded; no route has a POST twin to send a
# longer one in, so the answer says the routes' own limits)
MAX_HEAD_BYTES = 64 * 1024
_BLANK_LINE = re.compile(rb"\n\r?\n")  # a head's end, as h11 finds it
_UNREADABLE_BODY = (
    b'{"error": {"code": "invalid_argument", "message": "the request could not be read:'
    b" its line and headers must be well formed, a URL's characters other than ASCII"
    b" percent-encoded (curl -G --data-urlencode 'q=...'), and under 64 KiB (a query"
    b" string that long is past what any route takes: search's query is at most"
    + f" {MAX_QUERY_BYTES:,} bytes, a grep pattern {MAX_PATTERN_CHARS:,} characters)".encode()
    + b'"}}'
)
UNREADABLE = (
    b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n"
    + f"{_COMMON}content-length: {len(_UNREADABLE_BODY)}\r\n\r\n".encode()
    + _UNREADABLE_BODY
)
# After that answer, what the client still sends is read and dropped for this long (or
# this much) before the connection closes: closed with a request's rest unread, the
# kernel resets it and the client never reads the answer
DRAIN_SECONDS = 2.0
DRAIN_BYTES = 16 << 20
# asyncio accepts up to ``backlog`` connections in one go before any is refused, and a
# refused or dropped connection's descriptor is freed a loop turn later: the cap leaves
# room for two such bursts plus the vaults, the index and the process itself.
BACKLOG = 128
RESERVED_FDS = 2 * BACKLOG + 64
Phase = Literal["headers", "body"] | None
BODY_ROUNDS = 4  # a body trickling in may take at most this many body timeouts
# Seconds a body may take to get going (slow start, a busy client) before its average
# rate is held to ``min_body_rate``; at most ``body_timeout``
BODY_GRACE = 5.0
RATE_CHECK = 0.25  # the shortest wait between two looks at a body's rate


def connection_cap(limits: ServerLimits) -> int:
    """The connection cap, below what the process may open (its soft limit is raised to
    the hard one first): connections never starve the vaults and the index of files."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    if soft == resource.RLIM_INFINITY:
        return limits.max_connections
    return max(8, min(limits.max_connections, soft - RESERVED_FDS))


def guarded_protocol(limits: ServerLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol bounded by ``limits`` (pass it as ``Config(http=...)``)."""
    cap = connection_cap(limits)

    class Guarded(_GuardedH11Protocol):
        max_connections = cap
        header_timeout = limits.header_timeout
        body_timeout = limits.body_timeout
        min_body_rate = limits.min_body_rate

    return Guarded


class _GuardedH11Protocol(H11Protocol):
    max_connections = 256
    header_timeout = 10.0
    body_timeout = 30.0
    min_body_rate = 16 * 1024  # bytes a second; 0: no floor

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        self._phase: Phase = None
        self._idle_since = time.monotonic()
        self._refused = False
        self._last_data = 0.0
        self._body_since = 0.0
        self._received = 0  # bytes, over the connection's life
        self._chunk_start = 0  # ``_received`` before the latest chunk
        self._body_start = 0  # ``_received`` when the body began (its first chunk in)
        self._held_start = 0.0  # the flow's held time when the body began
        self._unread: asyncio.TimerHandle | None = None
        self._drained: int | None = None  # bytes dropped after an unreadable request

    # -- uvicorn's protocol interface ------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.connections) >= self.max_connections and not self._make_room():
            self.transport = transport
            self._refused = True
            log.warning("refused a connection: %d connections are open", len(self.connections))
            transport.write(BUSY)
            transport.close()
            return
        super().connection_made(transport)
        self.flow = _TimedFlow(transport)
        self._arm("headers")

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._drained is not None:  # (the rest of a request that could not be read)
            self._drained += len(data)
            if self._drained > DRAIN_BYTES:
                self.transport.abort()
            return
        self._last_data = time.monotonic()
        self._chunk_start = self._received
        self._received += len(data)
        super().data_received(data)
        self._follow()

    def handle_events(self) -> None:
        """uvicorn's, with the head's size held to ``MAX_HEAD_BYTES`` however it arrives:
        h11 checks its limit only while a head is incomplete, so a 100 KB request line
        read whole in one go (over loopback, as one ``send``) was served."""
        if self.conn.their_state is h11.IDLE and self._head_too_long():
            self.logger.warning("Invalid HTTP request received: its head is over 64 KiB.")
            self.send_400_response("its head is over 64 KiB")
            return
        super().handle_events()

    def _head_too_long(self) -> bool:
        """The request waiting to be read has no end of its head in its first
        ``MAX_HEAD_BYTES`` (a short buffer, the usual case, is not searched)."""
        pending = self.conn.trailing_data[0]
        if len(pending) <= MAX_HEAD_BYTES:
            return False
        return _BLANK_LINE.search(pending, 0, MAX_HEAD_BYTES) is None

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._idle_since = time.monotonic()
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._answer_taken()
        if self._refused:
            return
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._unread is None:
            self._unread = self.loop.call_later(self.body_timeout, self._answer_not_taken)

    def resume_writing(self) -> None:
        self._answer_taken()
        super().resume_writing()

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot read: uvicorn answered in plain text and closed at once,
        so a long request's unread rest made the kernel reset the connection and the
        client saw no answer (a 160 KB query string). A JSON 400, then the rest drained
        for a moment before the connection closes (uvicorn has logged ``msg``)."""
        self.transport.write(UNREADABLE)
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._disarm()
        self._drained = 0
        self._timer = self.loop.call_later(DRAIN_SECONDS, self.transport.close)

    def timeout_keep_alive_handler(self) -> None:
        if self.transport.get_write_buffer_size():
            _drop(self.transport)  # (uvicorn's close would wait to send it, for ever)
        super().timeout_keep_alive_handler()

    # -- timers ------------------------------------------------------------------------------

    def _answer_taken(self) -> None:
        if self._unread is not None:
            self._unread.cancel()
            self._unread = None

    def _answer_not_taken(self) -> None:
        self._unread = None
        log.debug("cut a connection that took none of its answer in time")
        self.transport.abort()

    def _follow(self) -> None:
        """Arm the timer the connection's state calls for."""
        state = self.conn.their_state
        if state is h11.IDLE:
            if self.conn.trailing_data[0]:  # part of the next request's headers
                if self._phase != "headers":
                    self._arm("headers")
            elif self._phase is not None:
                self._disarm()  # idle between requests: uvicorn's keep-alive timeout
        elif state is h11.SEND_BODY:
            if self._phase != "body":
                now = time.monotonic()
                self._start_body(now, self._chunk_start)
                self._arm("body", self._body_wait(now))
        else:
            self._disarm()

    def _start_body(self, now: float, received: int) -> None:
        """The body's clocks start (again): ``received`` bytes before it."""
        self._body_since = now
        self._body_start = received
        self._held_start = self._held(now)

    def _arm(self, phase: Phase, seconds: float | None = None) -> None:
        self._disarm()
        self._phase = phase
        if seconds is None:
            seconds = self.header_timeout if phase == "headers" else self.body_timeout
        self._timer = self.loop.call_later(seconds, self._expired)

    def _held(self, now: float) -> float:
        flow = self.flow
        return flow.held(now) if isinstance(flow, _TimedFlow) else 0.0

    def _body_seconds(self, now: float) -> float:
        """Seconds the body has taken so far, time held unread aside (not the client's)."""
        return now - self._body_since - (self._held(now) - self._held_start)

    def _rate_deadline(self, now: float) -> float:
        """When the body's average falls below ``min_body_rate`` if no more arrives: the
        grace, plus a second per ``min_body_rate`` bytes in, plus time held unread."""
        if self.min_body_rate <= 0:
            return float("inf")
        grace = min(BODY_GRACE, self.body_timeout)
        arrived = self._received - self._body_start
        return now - self._body_seconds(now) + grace + arrived / self.min_body_rate

    def _body_wait(self, now: float) -> float:
        """Seconds until the body's next look: a body timeout, or sooner its rate's."""
        return max(RATE_CHECK, min(self.body_timeout, self._rate_deadline(now) - now))

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = None

    def _expired(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        if self._phase == "headers" and state is h11.IDLE:
            log.debug("closed a connection that sent no complete headers in time")
            if self.conn.trailing_data[0]:
                self.transport.write(TIMED_OUT)
            _drop(self.transport)
        elif self._phase == "body" and state is h11.SEND_BODY:
            now = time.monotonic()
            if self.conn.they_are_waiting_for_100_continue:
                # (``Expect: 100-continue``, its body not asked for yet: waiting for a large
                # body's place, it was cut after the grace though it had sent all it may)
                self._last_data = now
                self._start_body(now, self._received)
                self._arm("body", RATE_CHECK)
                return
            moving = now - self._last_data < self.body_timeout
            if self.flow.read_paused:  # the server holds off reading: not the client's fault
                self._arm("body")
                return
            # (a body waiting for its place, then sent at a good rate, was cut at the first
            # look once it had the place: time held unread is not counted)
            if moving and self._body_seconds(now) < BODY_ROUNDS * self.body_timeout:
                if now < self._rate_deadline(now):
                    self._arm("body", self._body_wait(now))
                    return
                log.debug("closed a connection whose request body arrives too slowly")
            else:
                log.debug("closed a connection whose request body did not arrive in time")
            _drop(self.transport)
        else:
            self._phase = None

    # -- the cap -----------------------------------------------------------------------------

    def _idle(self) -> bool:
        """No request of this connection is in flight (between requests or in headers)."""
        cycle = self.cycle
        return self.conn.their_state is h11.IDLE and (cycle is None or cycle.response_complete)

    def _make_room(self) -> bool:
        """Close the connection idle for the longest; False when all are busy."""
        idle = [
            p
            for p in self.connections
            if isinstance(p, _GuardedH11Protocol) and not p.transport.is_closing() and p._idle()
        ]
        if not idle:
            return False
        oldest = min(idle, key=lambda p: p._idle_since)
        log.debug("dropped the longest idle connection to make room for a new one")
        _drop(oldest.transport)
        return True


class _TimedFlow(FlowControl):
    """uvicorn's flow control, counting the time reading was paused: a body waiting unread
    for its turn is not sending slowly."""

    def __init__(self, transport: asyncio.Transport) -> None:
        super().__init__(transport)
        self._held = 0.0
        self._paused_at = 0.0

    def pause_reading(self) -> None:
        if not self.read_paused:
            self._paused_at = time.monotonic()
        super().pause_reading()

    def resume_reading(self) -> None:
        if self.read_paused:
            self._held += time.monotonic() - self._paused_at
        super().resume_reading()

    def held(self, now: float) -> float:
        """Seconds reading was paused, so far."""
        return self._held + (now - self._paused_at if self.read_paused else 0.0)


def _drop(transport: asyncio.Transport) -> None:
    """Close a connection now: ``close`` waits until its buffer is sent, which a client
    that reads nothing never lets happen (its descriptor and answer then stay)."""
    if transport.get_write_buffer_size() > len(TIMED_OUT):
        transport.abort()
    else:
        transport.close()
