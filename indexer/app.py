"""Running the server: single-instance lock, uvicorn on port 0, URL file, clean shutdown.

Order matters: the URL file is written only once uvicorn accepts connections (so a
client that finds it can connect), and removed at shutdown only if it still holds our
URL (a newer instance may have replaced it). uvicorn re-raises SIGTERM/SIGINT after its
graceful shutdown, so ``run`` installs Python handlers first; cleanup then runs normally
and the process exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import secrets
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse

import indexer
from indexer.core import Core
from indexer.index import NoteIndex
from indexer.index_schema import IndexSchemaError
from indexer.layout import Workspace
from indexer.sandbox import Sandbox
from indexer.server import create_server
from indexer.settings import Settings
from indexer.storage import remove_orphan_temp_files
from indexer.vault import Vault
from indexer.web.auth import Logins
from indexer.web.mount import web_middleware, web_routes

log = logging.getLogger("indexer")


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
EXIT_STARTUP_FAILED = 1
EXIT_ALREADY_RUNNING = 3


class AlreadyRunningError(RuntimeError):
    """Another ``indexer serve`` holds the workspace lock."""


class StartupError(RuntimeError):
    """The server could not start listening (address in use, bad host...)."""


async def _serve(server: uvicorn.Server, where: str) -> None:
    """``server.serve()``; uvicorn's ``sys.exit`` on a failed start becomes a StartupError."""
    try:
        await server.serve()
    except SystemExit:
        raise StartupError(f"could not listen on {where} (is the port in use?)") from None


@contextlib.contextmanager
def workspace_lock(workspace: Workspace) -> Iterator[None]:
    """Hold ``W/.indexer/lock`` (flock) for the process's life; the kernel frees it on death."""
    workspace.state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(workspace.lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise AlreadyRunningError(
                f"another indexer is already serving the workspace {workspace.root} "
                f"(it holds {workspace.lock_path}); stop it first or use another workspace"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)


def write_private_file(path: Path, text: str, mode: int) -> None:
    """Atomically replace ``path`` with ``text`` (temp file + rename), created with ``mode``."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def remove_if_ours(path: Path, text: str) -> None:
    """Remove ``path`` only if it still holds ``text``."""
    try:
        if path.read_text(encoding="utf-8") == text:
            path.unlink()
    except FileNotFoundError:
        pass


def build_app(settings: Settings) -> tuple[Starlette, NoteIndex]:
    """The ASGI app (MCP at ``/mcp``, REST at ``/api/v1``, the page at ``/ui``, ``/health``)
    and the index."""
    workspace = settings.workspace
    index = NoteIndex(workspace)
    try:
        index.open()
    except IndexSchemaError as err:
        raise StartupError(str(err)) from None
    vault = Vault(Sandbox(workspace), max_file_bytes=settings.max_file_bytes)
    mcp = create_server(settings, vault, index)
    logins = Logins(settings.token)

    @mcp.custom_route("/health", methods=["GET"])
    async def health(request: Request) -> JSONResponse:
        # Answered without the token (liveness checks, stale-URL detection), so it says
        # nothing about the machine: no paths, no pid.
        return JSONResponse(
            {"status": "ok", "version": indexer.__version__, "index_ready": index.ready}
        )

    app = mcp.http_app(
        path="/mcp",
        json_response=True,
        host_origin_protection=True,
        allowed_hosts=list(settings.allowed_hosts) or None,
        allowed_origins=list(settings.allowed_origins) or None,
        middleware=web_middleware(logins),
    )
    app.router.routes.extend(web_routes(Core(settings, vault, index), logins))
    return app, index


def connect_host(host: str) -> str:
    """The address clients should use: a wildcard bind is reached through loopback."""
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


async def serve_until_stopped(settings: Settings, on_serving: Callable[[], None]) -> None:
    workspace = settings.workspace
    for lang in workspace.langs():
        removed = remove_orphan_temp_files(workspace.vault_dir(lang))
        if removed:
            log.warning("removed %d temp file(s) left by a crash in %s", removed, lang)
    if settings.token:
        write_private_file(workspace.token_file, settings.token + "\n", 0o600)
    else:
        workspace.token_file.unlink(missing_ok=True)
        if settings.host not in LOOPBACK_HOSTS:
            log.warning(
                "listening on %s without a token: anything that can reach it can read and "
                "write the vaults; set INDEXER_MCP_TOKEN",
                settings.host,
            )
    app, index = build_app(settings)
    index.start_background()
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=2,
        access_log=False,
    )
    server = uvicorn.Server(config)
    where = f"{settings.host}:{settings.port}"
    task = asyncio.create_task(_serve(server, where))
    url_text = ""
    try:
        while not server.started:
            if task.done():
                await task
                raise StartupError(f"could not listen on {where}")
            await asyncio.sleep(0.01)
        on_serving()
        port = server.servers[0].sockets[0].getsockname()[1]
        url = f"http://{connect_host(settings.host)}:{port}/mcp"
        url_text = url + "\n"
        write_private_file(workspace.url_file, url_text, 0o644)
        log.info("indexer %s serving %s (workspace %s)", indexer.__version__, url, workspace.root)
        await task
    finally:
        if url_text:
            remove_if_ours(workspace.url_file, url_text)
        index.close()
        log.info("indexer stopped")


def run(settings: Settings) -> int:
    """``indexer serve``: returns the exit code."""
    serving: list[bool] = []

    def on_signal(signum: int, frame: object) -> None:
        # uvicorn handles signals while it serves and re-raises the signal afterwards:
        # that re-raise is ignored; a signal before serving starts stops the process.
        if not serving:
            raise KeyboardInterrupt

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    try:
        with workspace_lock(settings.workspace):
            asyncio.run(serve_until_stopped(settings, on_serving=lambda: serving.append(True)))
    except AlreadyRunningError as err:
        log.error("%s", err)
        return EXIT_ALREADY_RUNNING
    except StartupError as err:
        log.error("%s", err)
        return EXIT_STARTUP_FAILED
    except KeyboardInterrupt:
        return 0
    return 0
