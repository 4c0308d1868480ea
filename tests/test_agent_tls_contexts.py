"""The agent client's connections load the CA bundle once a process, and never for a
plain http:// indexer (``agent_client.tls``): each connection's HTTP transport made a
TLS context of its own and loaded the bundle into it, 25-35 ms of CPU, for a URL that
was plain HTTP to this machine's loopback."""

from __future__ import annotations

import asyncio
import socket
import ssl
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer

from agent_client.connection import open_session
from agent_client.discovery import Endpoint
from agent_client.settings import ClientSettings
from shared.errors import IndexerOfflineError


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every CA bundle a TLS context of this process loads from now on (the files or
    folders named; None for the default ones)."""
    seen: list[object] = []
    load = ssl.SSLContext.load_verify_locations

    def counted(self: ssl.SSLContext, *args: object, **kwargs: object) -> None:
        seen.append(args[0] if args else kwargs.get("cafile"))
        load(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", counted)
    return seen


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _connect_to(settings: ClientSettings, url: str) -> None:
    """A connection to ``url`` that nothing answers: refused, after its client is made."""
    with pytest.raises(IndexerOfflineError, match="connection refused"):
        async with open_session(settings, Endpoint(url)):
            pass


def test_connections_to_a_plain_http_indexer_load_no_ca_bundle(
    server: RunningIndexer, loads: list[object]
) -> None:
    """Five connections (each with its status call) to the real indexer: none loads a
    bundle (was one each)."""
    settings = ClientSettings(workspace=server.workspace)

    async def connect(times: int) -> None:
        for _ in range(times):
            async with open_session(settings) as session:
                assert (await session.vault("en").status()) is not None

    asyncio.run(connect(5))
    assert loads == []


def test_a_second_https_connection_loads_no_bundle(tmp_path: Path, loads: list[object]) -> None:
    """An https:// URL gets a verifying context, made at its first use in the process and
    reused by the next connection, of another event loop."""
    settings = ClientSettings(workspace=tmp_path, connect_timeout=5.0)
    url = f"https://127.0.0.1:{_closed_port()}/mcp"
    asyncio.run(_connect_to(settings, url))
    first = len(loads)
    assert first <= 1  # (none when an earlier test of this process made it)
    asyncio.run(_connect_to(settings, url))
    assert len(loads) == first


def test_another_ca_file_gets_a_context_of_its_own(
    tmp_path: Path, loads: list[object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """SSL_CERT_FILE names the CAs trusted: a change of it is a context of its own, loaded
    from that file once; a plain http:// connection still loads none."""
    bundle = ssl.get_default_verify_paths().openssl_cafile
    if not Path(bundle).is_file():
        pytest.skip(f"no CA bundle at {bundle}")
    copy = tmp_path / "cas.pem"
    copy.write_bytes(Path(bundle).read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(copy))
    settings = ClientSettings(workspace=tmp_path, connect_timeout=5.0)
    port = _closed_port()
    for _ in range(2):
        asyncio.run(_connect_to(settings, f"https://127.0.0.1:{port}/mcp"))
        asyncio.run(_connect_to(settings, f"http://127.0.0.1:{port}/mcp"))
    assert loads == [str(copy)]
