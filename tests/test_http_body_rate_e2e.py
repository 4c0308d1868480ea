"""Slow bodies against a real ``indexer serve`` over raw sockets: a body must arrive at
``INDEXER_MIN_BODY_RATE`` on average once its grace is over.

Four clients declaring 1 MB bodies that sent 3 bytes, then a byte now and then, held
the four places for large bodies until the body timeout's last round (4 body timeouts:
2 minutes by default), and a legitimate large PUT waited behind them as long.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer
from test_http_limits_e2e import _limited_server, closed_by_server, port_of, rest

from indexer.web.connections import BODY_GRACE, BODY_ROUNDS

pytestmark = pytest.mark.e2e

BODY_TIMEOUT = 3.0  # the grace is the smaller of this and BODY_GRACE
GRACE = min(BODY_GRACE, BODY_TIMEOUT)
RATE = 16 * 1024
LARGE_NOTE = json.dumps({"content": "y" * (300 * 1024)}).encode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    root = tmp_path_factory.mktemp("rate")
    limits = {
        "INDEXER_BODY_TIMEOUT": str(BODY_TIMEOUT),
        "INDEXER_MAX_LARGE_BODIES": "4",
        "INDEXER_MIN_BODY_RATE": str(RATE),
    }
    with _limited_server(root, **limits) as running:
        yield running


def _put_head(port: int, path: str, length: int) -> bytes:
    return (
        f"PUT /api/v1/en/notes/{path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: text/markdown\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def test_slow_senders_do_not_hold_the_large_body_places(server: RunningIndexer) -> None:
    """Four 1 MB bodies trickling a byte every 2 s (under the body timeout) held the
    four places for 4 body timeouts; they are cut once their grace is over."""
    port = port_of(server)
    stop = threading.Event()
    socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
    for n, sock in enumerate(socks):
        sock.sendall(_put_head(port, f"slow{n}.md", 1_000_000) + b"# s")

    def trickle() -> None:
        while not stop.wait(2.0):
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.sendall(b"x")

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    try:
        time.sleep(0.5)  # the four hold the places
        started = time.monotonic()
        status, _ = rest(server, "PUT", "/api/v1/en/notes/big.md", LARGE_NOTE)
        waited = time.monotonic() - started
    finally:
        stop.set()
        trickler.join()
        for sock in socks:
            sock.close()
    assert status in (200, 201)
    assert waited < GRACE + BODY_TIMEOUT < BODY_ROUNDS * BODY_TIMEOUT, f"waited {waited:.1f} s"
    vault = server.workspace / "memory/languages/en/vault"
    assert not any((vault / f"slow{n}.md").exists() for n in range(4))


def test_a_slow_but_steady_body_gets_through(server: RunningIndexer) -> None:
    """A body sent at twice the floor, for longer than the grace, is written; one sent
    at a quarter of it, never still for a body timeout, is cut once its average falls
    below the floor (after ``GRACE * 4 / 3`` s)."""
    port = port_of(server)
    size = int(2 * RATE * (GRACE + 2))
    chunk = 4096
    steady = socket.create_connection(("127.0.0.1", port), timeout=30)
    slow = socket.create_connection(("127.0.0.1", port), timeout=30)
    steady.sendall(_put_head(port, "steady.md", size))
    slow.sendall(_put_head(port, "too-slow.md", size))
    started = time.monotonic()
    sent = 0
    try:
        while sent < size:
            part = min(chunk, size - sent)
            steady.sendall(b"s" * part)
            with contextlib.suppress(OSError):
                slow.sendall(b"t" * (part // 8))  # (a quarter of the floor)
            sent += part
            time.sleep(max(0.0, started + sent / (2 * RATE) - time.monotonic()))
        answer = steady.recv(4096)
    finally:
        steady.close()
    assert time.monotonic() - started > GRACE + 1
    assert answer.split(b" ", 2)[1] in (b"200", b"201"), answer[:300]
    assert closed_by_server(slow, 0.5)
    vault = server.workspace / "memory/languages/en/vault"
    assert "s" * size in (vault / "steady.md").read_text()
    assert not (vault / "too-slow.md").exists()


def test_a_body_waiting_its_turn_is_not_too_slow(tmp_path: Path) -> None:
    """Time a body waits unread for a large-body place is not the client's: a large PUT
    behind a slower one is written, though it waited longer than the grace and the
    credit its bytes in (before its reading paused) gave it. (A high floor: at 16 KiB/s
    those bytes alone would cover the wait.)"""
    rate = 256 * 1024
    limits = {
        "INDEXER_BODY_TIMEOUT": str(BODY_TIMEOUT),
        "INDEXER_MAX_LARGE_BODIES": "1",
        "INDEXER_MIN_BODY_RATE": str(rate),
    }
    with _limited_server(tmp_path, **limits) as server:
        port = port_of(server)
        size = int(2 * rate * (GRACE + 3))
        first = socket.create_connection(("127.0.0.1", port), timeout=30)
        second = socket.create_connection(("127.0.0.1", port), timeout=30)
        first.sendall(_put_head(port, "first.md", size))
        time.sleep(0.3)  # the first one takes the place
        body = _put_head(port, "second.md", 300 * 1024) + b"z" * (300 * 1024)
        waiting = threading.Thread(target=second.sendall, args=(body,), daemon=True)
        waiting.start()  # (it blocks: the body is not read until the first one is done)
        started = time.monotonic()
        try:
            for sent in range(0, size, 4096):
                first.sendall(b"f" * min(4096, size - sent))
                time.sleep(max(0.0, started + sent / (2 * rate) - time.monotonic()))
            answers = first.recv(4096), second.recv(4096)
            waiting.join()
        finally:
            first.close()
            second.close()
        for answer in answers:
            assert answer.split(b" ", 2)[1] in (b"200", b"201"), answer[:300]


def _send_at(sock: socket.socket, data: bytes, rate: float, step: int = 4096) -> None:
    for at in range(0, len(data), step):
        sock.sendall(data[at : at + step])
        time.sleep(step / rate)


def _status(sock: socket.socket, timeout: float = 60) -> bytes:
    sock.settimeout(timeout)
    got = b""
    with contextlib.suppress(OSError):
        while b"\r\n" not in got and (chunk := sock.recv(65536)):
            got += chunk
    return got.split(b"\r\n")[0]


@contextlib.contextmanager
def _places_held(port: int, seconds: float, places: int = 4) -> Iterator[None]:
    """The ``places`` large-body places held about ``seconds`` by PUTs well above the rate."""
    body = b"# h\n" + b"x" * 300_000  # (over 256 KiB: a large body)
    rate = len(body) / seconds

    def hold(n: int) -> None:
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(_put_head(port, f"held{n}.md", len(body)))
            _send_at(sock, body, rate)
            assert _status(sock)[:12] in (b"HTTP/1.1 200", b"HTTP/1.1 201")

    holders = [threading.Thread(target=hold, args=(n,), daemon=True) for n in range(places)]
    for holder in holders:
        holder.start()
    time.sleep(0.5)
    try:
        yield
    finally:
        for holder in holders:
            holder.join()


def test_a_client_waiting_for_100_continue_is_not_cut(server: RunningIndexer) -> None:
    """``Expect: 100-continue`` sends nothing until the server asks: waiting for a large
    body's place longer than the grace, it was cut as a slow sender."""
    port = port_of(server)
    with _places_held(port, 2 * GRACE), socket.create_connection(("127.0.0.1", port)) as sock:
        head = _put_head(port, "expects.md", len(LARGE_NOTE))
        sock.sendall(head[:-2] + b"Expect: 100-continue\r\n\r\n")
        assert _status(sock).startswith(b"HTTP/1.1 100")
        sock.sendall(LARGE_NOTE)
        assert _status(sock)[:12] in (b"HTTP/1.1 200", b"HTTP/1.1 201")


def test_a_body_held_for_its_turn_may_take_longer_than_the_rounds(tmp_path: Path) -> None:
    """Time a body waits unread for a large-body place is not counted in its
    ``BODY_ROUNDS`` body timeouts: a fast client held ~4.5 s, then sending on at 0.9 MB/s,
    was cut at the first look after it got the place, its rounds spent waiting. (The
    body is far larger than the socket buffers: reading really is paused while it waits.)
    """
    body_timeout = 1.5  # (4 rounds: 6 s)
    limits = {"INDEXER_BODY_TIMEOUT": str(body_timeout), "INDEXER_MAX_LARGE_BODIES": "1"}
    body = b"# w\n" + b"w" * 4_000_000  # (under INDEXER_MAX_FILE_BYTES, 4 MiB)
    step, rate = 64 * 1024, 0.9e6  # bytes a second, once it has the place: ~4.5 s
    with _limited_server(tmp_path, **limits) as server:
        port = port_of(server)
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 32 * 1024)
        sock.connect(("127.0.0.1", port))
        held = 0.0
        with sock, _places_held(port, 5.0, places=1):
            started = due = time.monotonic()
            sock.sendall(_put_head(port, "waited.md", len(body)))
            with contextlib.suppress(OSError):  # (cut: the status says so)
                for at in range(0, len(body), step):
                    before = time.monotonic()
                    sock.sendall(body[at : at + step])
                    after = time.monotonic()
                    held = max(held, after - before)
                    due = (after if after - before > 0.5 else due) + step / rate
                    time.sleep(max(0.0, due - time.monotonic()))
            status = _status(sock)
            took = time.monotonic() - started
        assert held > 3.0, f"never held ({held:.1f} s): the socket buffers took the body"
        assert status[:12] in (b"HTTP/1.1 200", b"HTTP/1.1 201"), (status, f"{took:.1f} s")
        assert took > (BODY_ROUNDS + 1) * body_timeout, f"took {took:.1f} s"
