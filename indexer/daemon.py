"""The indexer process: the one composition root, and the serving life cycle.

``build_core`` is the only place the objects are built and wired together (the index
listens to the vault's changes and plans its greps; history hears from the index what
changed on disk outside the tools); every frontend gets the same ``Core``. ``run``
then holds the single-instance lock, serves, writes the URL file only once uvicorn
accepts connections (so a client that finds it can connect), and removes it at
shutdown only if it still holds our URL (a newer instance may have replaced it).
uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, so ``run`` installs
Python handlers first; cleanup then runs normally and the process exits 0. SIGHUP (a
closed terminal) is turned into SIGTERM.

Start-up is kept short: the integrity checks that read the whole index and history
run only when the last server did not stop cleanly (``W/.indexer/clean-shutdown``,
written at a clean stop and removed at start), the index's once serving
(``index.late_check``: 19 s of an 860 MB file); the sweep of the temp files a crash left
(dot-files no tool, index or watcher sees) and the index catch up in the background;
the garbage collector, off while ``indexer serve`` starts, comes back on once serving.
The URL file is written only once the web app answers: an early URL with requests held
until fastmcp is imported (about a second) made clients with a short connect timeout
call the indexer offline.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import gc
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

import indexer
from indexer import clean_mark, open_folders
from indexer.core import Core
from indexer.idle_trim import IdleTrim
from indexer.index import late_check
from indexer.index.service import NoteIndex
from indexer.jobs.llm import JobModel
from indexer.jobs.maintenance_tasks import enabled_tasks
from indexer.jobs.recall import Recall
from indexer.jobs.retention import prune_history
from indexer.jobs.runner import JobRunner
from indexer.jobs.scheduler import MaintenanceScheduler
from indexer.jobs.summaries import Summaries
from indexer.one_cpu import where_pinned
from indexer.scans import ScanPool
from indexer.settings import Settings
from indexer.vault import atomic, fsops
from indexer.vault.no_wait import abandoned_when
from indexer.vault.unrecorded import Refusal
from indexer.warm_up import Warming, after_start
from indexer.web.app import build_app
from indexer.web.connections import BACKLOG, MAX_HEAD_BYTES, guarded_protocol
from indexer.wiring import (
    build_maintenance,
    build_vault,
    once,
    open_history,
    record_outside_changes,
)
from indexer.workspace_lock import workspace_lock
from shared.errors import IndexSchemaError, StartupError
from shared.local_zone import warn_unknown_zone
from shared.workspace import Workspace

log = logging.getLogger("indexer")

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


class Server(uvicorn.Server):
    """uvicorn's server, which also tells ``on_stop`` of a stop signal as it comes:
    uvicorn sees one at its next tick (0.1 s) and then shuts down (0.1 s more), while a
    first index's walk and batches went on and held the interpreter (a stop of a start
    indexing 10,000 notes beside a test run took 0.3-1.7 s, median 1.2; now median 0.3)."""

    def __init__(self, config: uvicorn.Config, on_stop: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_stop = on_stop

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        # (on the loop, not in the signal handler: that may have cut short the main
        # thread inside the very lock an ``Event.set`` takes)
        with contextlib.suppress(RuntimeError):  # (no loop runs: nothing to tell)
            asyncio.get_running_loop().call_soon_threadsafe(self.on_stop)


def build_core(settings: Settings, *, check: bool = True, check_index: bool | None = None) -> Core:
    """Open history and the index and wire them to the vault; summaries hear every
    change, recall reads both, the maintenance scheduler hears the index's changes (it
    starts with ``serve``; maintenance itself is built at its first use).
    ``HistoryStoreError`` for an unusable history, ``IndexSchemaError`` for a newer
    index. ``check``: run the integrity checks that read both files whole;
    ``check_index``: the index's apart (a server's runs once serving: ``late_check``)."""
    history = open_history(settings, check=check)
    try:
        vault = build_vault(settings, history)
        index = NoteIndex(settings.workspace)
        # (before ``open``: an older index's texts)
        unrecorded = record_outside_changes(index, vault)
        index.open(check=check, full=check_index)
    except BaseException:
        history.close()
        raise
    vault.index_sync = index  # writes indexed before they return, appends before a read
    vault.grep_planner = index.grep_plan
    vault.folder_counter = index.folders.below  # (the page's folder counts)
    if vault.recorder.enabled:
        index.recheck_listeners.append(
            functools.partial(vault.recheck_history, indexed=index.etags)
        )
    model = JobModel(settings.model) if settings.model is not None else None
    jobs = JobRunner()
    maintenance = once(functools.partial(build_maintenance, settings, vault, index, model))
    scheduler = MaintenanceScheduler(
        maintenance,
        jobs,
        tasks=enabled_tasks(settings.maintenance),
        check_seconds=settings.maintenance.check_minutes * 60,
        debounce_seconds=settings.maintenance.debounce_seconds,
    )
    index.change_listeners.append(scheduler.on_change)
    summaries = None
    if settings.summaries:
        summaries = Summaries(
            vault.sandbox,
            index=index,
            model=model,
            max_children=settings.summaries_max_children,
            debounce=settings.summaries_debounce,
            written=index.note_changed,  # a summary is searchable once written
            recorder=vault.recorder,  # and a version in history
            file_lock=vault.file_lock,  # (as the watcher's record of a change beside it)
        )
        vault.listeners.append(summaries.vault_changed)
        index.change_listeners.append(summaries.index_changed)
    return Core(
        settings=settings,
        vault=vault,
        index=index,
        model=model,
        jobs=jobs,
        recall=Recall(vault, index, abstracts=settings.summaries),
        maintenance=maintenance,
        scheduler=scheduler,
        summaries=summaries,
        scans=ScanPool(settings.limits.scan_threads, told=abandoned_when),
        unrecorded=unrecorded,
    )


async def _serve(server: uvicorn.Server, host: str, port: int) -> None:
    """``server.serve()``; uvicorn's ``sys.exit`` on a failed start becomes a StartupError
    that says why (uvicorn logs the error, then exits without it)."""
    try:
        await server.serve()
    except SystemExit:
        raise StartupError(f"could not listen on {host}:{port} ({_why_not(host, port)})") from None


def _why_not(host: str, port: int) -> str:
    """Why ``host:port`` cannot be listened on, found by trying it once more: a port in
    use, an address not of this machine, a name that does not resolve."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, IndexError) as err:
        return f"{host} does not resolve: {getattr(err, 'strerror', err)}"
    with socket.socket(family, kind, proto) as probe:
        try:
            probe.bind(address)
        except OSError as err:
            return str(err.strerror or err)
    return "is the port in use?"


def write_private_file(path: Path, text: str, mode: int) -> None:
    """Atomically replace ``path`` with ``text`` (temp file, fsync, rename), with ``mode``."""
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    with fsops.opened(fd):
        atomic.replace_at(fd, path.name, text.encode("utf-8"), mode=mode)


def remove_if_ours(path: Path, text: str) -> None:
    """Remove ``path`` only if it still holds ``text``."""
    try:
        if path.read_text(encoding="utf-8") == text:
            path.unlink()
    except FileNotFoundError:
        pass


def remove_url_file(path: Path, text: str) -> None:
    """``remove_if_ours`` at shutdown: one that fails is a warning, and the stop goes on
    (clients follow the file only while a server holds ``serving``; the next start
    replaces it)."""
    try:
        remove_if_ours(path, text)
    except OSError as err:
        log.warning(
            "could not remove %s (%s): clients pass it over while no server runs, and the"
            " next start replaces it",
            path,
            err.strerror or err,
        )


def run_all(steps: list[Callable[[], object]]) -> BaseException | None:
    """Run every step whatever an earlier one raised; the first error is returned (a
    step cut short must not leave the rest of a shutdown undone)."""
    first: BaseException | None = None
    for step in steps:
        try:
            step()
        except Exception as err:
            if first is None:
                first = err
            else:
                log.exception("while stopping, after an earlier error")
    return first


def what_to_do(err: OSError) -> str:
    """Advice that fits why a file of the workspace could not be written."""
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return "free some disk space, then start again"
    if err.errno in (errno.EACCES, errno.EPERM):
        return (
            "the system does not let this user write it: run the indexer as the user who"
            " owns the workspace, or make the workspace folder writable, then start again"
        )
    if err.errno == errno.EROFS:
        return "the workspace is on a read-only file system: mount it read-write, then start again"
    return "fix that, then start again"


def leave_clean_mark(workspace: Workspace, refused: list[Refusal]) -> None:
    text = clean_mark.render(refused)
    if text is None:  # (thousands of long names: the mark would pass what a start reads)
        log.warning(
            "%d files history refuses have names too long, together, for %s: the next"
            " start checks the index and history whole",
            len(refused),
            workspace.clean_mark,
        )
        return
    write_private_file(workspace.clean_mark, text, 0o600)


def warn_shared_vaults(workspace: Workspace) -> None:
    """Name at start each vault left unserved because its folder is another's (links:
    ``Workspace.shared_vaults``): its tool calls are refused, and this says why."""
    for lang, owner in workspace.shared_vaults().items():
        log.warning(
            "the vault of %s is not served: its folder %s is (or lies inside or around) the"
            " vault of %s; give %s a folder of its own, then restart",
            lang,
            os.path.realpath(workspace.vault_dir(lang)),
            owner,
            lang,
        )


def connect_host(host: str) -> str:
    """The address clients should use: a wildcard bind is reached through loopback."""
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def uvicorn_config(app: Any, settings: Settings) -> uvicorn.Config:
    """How uvicorn serves the app: our guarded HTTP/1.1 protocol, no WebSockets, our logs."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=guarded_protocol(settings.limits),
        ws="none",  # no WebSocket routes; "auto" would import websockets at start (50 ms)
        backlog=BACKLOG,
        log_level="warning",
        log_config=None,  # uvicorn's loggers go through ours (one format, repeats limited)
        lifespan="on",
        timeout_graceful_shutdown=2,
        access_log=False,
        h11_max_incomplete_event_size=MAX_HEAD_BYTES,  # (h11's own: 16 KiB)
    )


async def serve_until_stopped(settings: Settings, on_serving: Callable[[], None]) -> None:
    workspace = settings.workspace
    taken = clean_mark.take(workspace)  # (the refusals a clean stop left, too)
    clean = taken.clean
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
    warn_shared_vaults(workspace)
    warn_unknown_zone(log)
    first = late_check.check_first(workspace, clean=clean, up_to_mb=settings.check_first_mb)
    try:
        core = build_core(settings, check=not clean, check_index=first)
    except IndexSchemaError as err:
        raise StartupError(err.message) from None
    if core.unrecorded is not None:  # (still refused, and said, not read till changed)
        core.unrecorded.seed(taken.refused)
    if first:
        late_check.drop_mark(workspace)
    app = build_app(core)
    index = core.index
    assert index is not None
    history = core.vault.recorder.store
    if history is not None and core.jobs is not None:
        core.jobs.submit(prune_history(history, settings.history_days, core.vault.clock))
    if core.scheduler is not None and core.scheduler.start():
        tasks = ", ".join(core.scheduler.tasks)
        if core.model is None:
            log.info("maintenance: %s without a model (the tagged entries are added)", tasks)
        else:
            log.info("maintenance: %s with the model %s", tasks, core.model.name)
    if core.summaries is not None and core.jobs is not None:
        core.summaries.start(core.jobs)  # after the start-up reconcile, in the background
    warming = Warming()

    def stopping() -> None:  # (the stop's waits below then find little under way)
        warming.closing.set()
        index.stop_background()

    server = Server(uvicorn_config(app, settings), on_stop=stopping)
    task = asyncio.create_task(_serve(server, settings.host, settings.port))
    url_text = ""
    stopped_cleanly = False
    checking: late_check.LateCheck | None = None
    trimming = IdleTrim()
    try:
        while not server.started:
            if task.done():
                await task
                raise StartupError(f"could not listen on {settings.host}:{settings.port}")
            await asyncio.sleep(0.005)
        on_serving()
        port = server.servers[0].sockets[0].getsockname()[1]
        url = f"http://{connect_host(settings.host)}:{port}/mcp"
        try:
            write_private_file(workspace.url_file, url + "\n", 0o644)
        except OSError as err:  # (no client could find the server)
            server.should_exit = True  # stopped first: uvicorn logs a task cut short
            await task
            raise StartupError(
                f"cannot write {workspace.url_file}: {err.strerror or err}; clients find the"
                f" server through it ({what_to_do(err)})"
            ) from None
        url_text = url + "\n"
        checking = late_check.LateCheck(workspace, index.checking, functools.partial(stop, server))
        index.on_failure = checking.suspect  # (a damage the catch-up meets: checked, rebuilt)
        if not clean and not first:  # (partial until it passed: set before the keeper)
            checking.start()
        index.start_background()  # once the first calls can be answered
        warming.idle.clear()
        threading.Thread(target=after_start, args=(workspace, warming), daemon=True).start()
        trimming.start()
        # Off while starting (``indexer serve``): on again once the watcher and the
        # reconcile run, so that its first pass (start-up's garbage) does not delay them.
        gc.enable()
        place = (indexer.__version__, url, workspace.root, where_pinned())
        log.info("indexer %s serving %s (workspace %s%s)", *place)
        await task
        stopped_cleanly = True
    finally:
        # Each step runs whatever an earlier one did: a URL file that could not be
        # removed (the workspace made read-only meanwhile) left the index and history
        # open, no clean mark and no "stopped" line, and the exit failed.
        if url_text:
            remove_url_file(workspace.url_file, url_text)
        warming.closing.set()
        trimming.stop()
        if checking is not None:
            checking.stop()
        steps: list[Callable[[], object]] = []
        if core.jobs is not None:  # the model's HTTP clients live on the jobs loop
            then = core.model.close if core.model is not None else None
            steps.append(functools.partial(core.jobs.stop, then=then))
        steps.append(index.close)
        unrecorded = core.unrecorded
        closed: list[int] = []  # (how many history still refused, at ``close``)
        if unrecorded is not None:  # (the index told its last: history takes them now)
            steps.append(lambda: closed.append(unrecorded.close()))
        if history is not None:
            steps.append(history.close)
        error = run_all(steps)
        # (outside changes history still refused: no clean mark, the next start rechecks;
        # files it refused for good as they are go into the mark instead)
        lost = unrecorded is not None and (not closed or closed[0] > 0)
        refused = unrecorded.kept_refused if unrecorded is not None else []
        warming.wait()
        if not index.closed_whole:  # (what it applied after: told to no history)
            log.warning("the watcher was still applying outside changes when the index closed")
        if checking is not None and checking.found is not None:  # (no clean mark: history's
            # check runs at the next start too)
            found = late_check.FoundDamaged(checking.found, index.path, marked=checking.marked)
            error = error or found
        elif stopped_cleanly and error is None and index.closed_whole and not lost:
            try:
                leave_clean_mark(workspace, refused)
            except OSError as err:
                log.warning(
                    "could not write %s (%s): the next start checks the index and history whole",
                    workspace.clean_mark,
                    err.strerror or err,
                )
        log.info("indexer stopped")
        if error is not None:
            raise error


def stop(server: uvicorn.Server) -> None:
    """Have uvicorn stop serving (from any thread: it looks at the flag)."""
    server.should_exit = True


def run(settings: Settings) -> None:
    """``indexer serve``: serve until a signal; operational errors go up to the CLI."""
    serving: list[bool] = []
    asked: list[int] = []  # (the stop signals received)

    def on_signal(signum: int, frame: object) -> None:
        # uvicorn handles signals while it serves and re-raises the signal afterwards:
        # that re-raise is ignored; a signal before serving starts stops the process.
        asked.append(signum)
        if not serving:
            raise KeyboardInterrupt

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, on_signal)
    # A closed terminal (or ``kill -HUP``) stops the server as SIGTERM does, cleanly: by
    # default it killed the process without its clean-shutdown mark or URL file removal.
    signal.signal(signal.SIGHUP, lambda signum, frame: os.kill(os.getpid(), signal.SIGTERM))
    locked = workspace_lock(settings.workspace, serving=True)
    try:
        with contextlib.suppress(KeyboardInterrupt), locked:
            if said := open_folders.warning(open_folders.open_folders(settings.workspace)):
                log.warning("%s", said)
            asyncio.run(serve_until_stopped(settings, on_serving=lambda: serving.append(True)))
    except late_check.FoundDamaged as err:  # (a stop asked meanwhile is no start again)
        err.stop_asked = bool(asked)
        raise
