"""The indexer process: the one composition root, and the serving life cycle.

``build_core`` is the only place the objects are built and wired together (the index
listens to the vault's changes and plans its greps); every frontend gets the same
``Core``. ``run`` then holds the single-instance lock, serves, writes the URL file
only once uvicorn accepts connections (so a client that finds it can connect), and
removes it at shutdown only if it still holds our URL (a newer instance may have
replaced it). uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, so ``run``
installs Python handlers first; cleanup then runs normally and the process exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import uvicorn

import indexer
from indexer.core import Core
from indexer.index.service import NoteIndex
from indexer.jobs.llm import JobModel
from indexer.jobs.runner import JobRunner
from indexer.scans import ScanPool
from indexer.settings import Settings
from indexer.vault import fsops
from indexer.vault.sandbox import Sandbox
from indexer.vault.tempfiles import remove_orphan_temp_files
from indexer.vault.vault import Vault
from indexer.web.app import build_app
from indexer.web.connections import BACKLOG, guarded_protocol
from shared.errors import AlreadyRunningError, IndexSchemaError, StartupError
from shared.workspace import Workspace

log = logging.getLogger("indexer")

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def build_core(settings: Settings) -> Core:
    """Open the index and wire it to the vault (``IndexSchemaError`` for a newer index)."""
    vault = Vault(Sandbox(settings.workspace), max_file_bytes=settings.max_file_bytes)
    index = NoteIndex(settings.workspace)
    index.open()
    vault.listeners.append(index.note_changed)
    vault.grep_planner = index.grep_plan
    model = JobModel(settings.model) if settings.model is not None else None
    return Core(
        settings=settings,
        vault=vault,
        index=index,
        model=model,
        jobs=JobRunner(),
        scans=ScanPool(settings.limits.scan_threads),
    )


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
    """Atomically replace ``path`` with ``text`` (temp file, fsync, rename), with ``mode``."""
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    with fsops.opened(fd):
        fsops.replace_at(fd, path.name, text.encode("utf-8"), mode=mode)


def remove_if_ours(path: Path, text: str) -> None:
    """Remove ``path`` only if it still holds ``text``."""
    try:
        if path.read_text(encoding="utf-8") == text:
            path.unlink()
    except FileNotFoundError:
        pass


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
    try:
        core = build_core(settings)
    except IndexSchemaError as err:
        raise StartupError(err.message) from None
    app = build_app(core)
    index = core.index
    assert index is not None
    index.start_background()
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=guarded_protocol(settings.limits),
        backlog=BACKLOG,
        log_level="warning",
        log_config=None,  # uvicorn's loggers go through ours (one format, repeats limited)
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
        if core.jobs is not None:
            core.jobs.stop()
        index.close()
        log.info("indexer stopped")


def run(settings: Settings) -> None:
    """``indexer serve``: serve until a signal; operational errors go up to the CLI."""
    serving: list[bool] = []

    def on_signal(signum: int, frame: object) -> None:
        # uvicorn handles signals while it serves and re-raises the signal afterwards:
        # that re-raise is ignored; a signal before serving starts stops the process.
        if not serving:
            raise KeyboardInterrupt

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    with contextlib.suppress(KeyboardInterrupt), workspace_lock(settings.workspace):
        asyncio.run(serve_until_stopped(settings, on_serving=lambda: serving.append(True)))
