"""``AsyncVaultMemoryTool`` and ``VaultMemoryTool``: the SDK's memory tool on a vault.

Each command does what the SDK's local-filesystem tool does, in the same order of
checks, so that its answers and errors are the same (see ``texts`` and ``paths``); the
file system calls are vault tool calls (``store``). Read-modify-write commands
(``str_replace``, ``insert``) write with ``if_match`` and start again from a fresh read
when the file changed meanwhile: an edit made by a person or another agent is never
overwritten. One MCP session per tool object, reopened after the indexer went away; a
call that finds it restarted on another port in the middle of a command is made there
when that cannot change anything twice (``agent_client.repeats``). Used from a new
event loop (``asyncio.run`` again), the tool opens a new session there, and first ends
the old loop's on the server (``_let_go``): the old connection cannot be closed.

The sync class runs the async one on an event loop of its own, in a private thread, so
it works from the SDK's tool runner and from code that is itself inside an event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import unicodedata
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, TypeVar

from anthropic.lib.tools import ToolError
from anthropic.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from agent_client.claude_memory import files, paths, texts
from agent_client.claude_memory.files import is_note
from agent_client.claude_memory.store import Changed, Kind, MemoryStore
from agent_client.sessions import LeftSession, SessionKeeper, end_left
from agent_client.settings import ClientSettings
from shared.errors import ForbiddenPathError, IndexerOfflineError
from shared.langs import check_lang
from shared.path_names import MAX_DEPTH, MAX_PATH_BYTES, check_char, check_segment

log = logging.getLogger("agent_client.memory_tool")

EDIT_ATTEMPTS = 10  # reads and writes of one edit while others keep changing the file
MAX_FOLDER_DEPTH = MAX_DEPTH - 1  # one name is left for a file
MAX_FOLDER_BYTES = MAX_PATH_BYTES - 256  # and room for its name
T = TypeVar("T")


class AsyncVaultMemoryTool(BetaAsyncAbstractMemoryTool):
    """Claude's memory tool (``memory_20250818``) storing ``/memories`` in ``folder`` of
    the vault ``lang``, through the indexer's MCP tools (settings default to the
    environment: ``ClientSettings.resolve()``)."""

    def __init__(
        self,
        lang: str,
        *,
        folder: str = "memories",
        settings: ClientSettings | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.lang = check_lang(lang)
        self.folder = _clean_folder(folder)
        self.settings = settings or ClientSettings.resolve()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._keeper: SessionKeeper | None = None
        self._lock: asyncio.Lock | None = None
        self._left: LeftSession | None = None  # the session of a loop left, to end

    async def aclose(self) -> None:
        """Close the MCP session (a later command opens a new one)."""
        keeper, self._keeper = self._keeper, None
        left, self._left = self._left, None
        if keeper is not None and self._loop is asyncio.get_running_loop():
            await keeper.close()
        elif keeper is not None:
            left = _let_go(keeper, self._loop)
        if left is not None:
            await end_left(left, self.settings)

    async def __aenter__(self) -> AsyncVaultMemoryTool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @contextlib.asynccontextmanager
    async def _store(self, command: str) -> AsyncIterator[MemoryStore]:
        """One command's access to the folder: commands of this object run one at a
        time; an unreachable indexer becomes a ToolError saying what was done. Its
        changes are kept in history with ``reason="memory_tool:<command>"``."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new event loop (asyncio.run again): a new session
            if self._keeper is not None:
                self._left = _let_go(self._keeper, self._loop)
            self._loop, self._keeper, self._lock = loop, None, asyncio.Lock()
        assert self._lock is not None
        async with self._lock:
            left, self._left = self._left, None
            if left is not None:  # (before a new one opens: the server's cap counts both)
                await end_left(left, self.settings)
            if self._keeper is None:
                self._keeper = SessionKeeper(self.settings)
            store: MemoryStore | None = None
            try:
                await self._keeper.begin()
                session = await self._keeper.get()
                store = MemoryStore(
                    session.vault(self.lang),
                    self.folder,
                    reason=f"memory_tool:{command}",
                    call_timeout=self.settings.call_timeout,
                )
                yield store
            except IndexerOfflineError as err:
                outcome = _offline_outcome(store)
                log.warning("memory tool: %s", err.message)  # its paths are for people only
                raise ToolError(
                    f"indexer_offline: the memory store (the vault indexer) is offline; "
                    f"{outcome}. Try again later."
                ) from None

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = paths.check(command.path).usable()
        async with self._store("view") as store:
            found = await store.load(path)
            if found is Kind.DIR:
                return texts.view_directory(command.path, await store.listing(path))
            if isinstance(found, Kind):
                raise ToolError(_no_such(path))
            return texts.view_file(command.path, found.text, command.view_range)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = paths.check(command.path).usable()
        async with self._store("create") as store:
            if path.is_root:
                raise ToolError(f"File {command.path} already exists")
            found: Kind | None
            if not _is_utf8(command.file_text):  # the SDK's error, once it found no file
                found = await store.kind(path.parts, path.shown)
                if found is Kind.MISSING:
                    command.file_text.encode("utf-8")
            else:
                found = await store.create(path, command.file_text)
            if found is Kind.BLOCKED:
                raise OSError(20, "Not a directory")
            if found is not None:
                raise ToolError(f"File {command.path} already exists")
        return f"File created successfully at: {command.path}"

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path = paths.check(command.path).usable()
        return await self._edit(
            "str_replace",
            path,
            lambda text: texts.replace(path.shown, text, command.old_str, command.new_str),
        )

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path = paths.check(command.path).usable()
        return await self._edit(
            "insert",
            path,
            lambda text: texts.insert(path.shown, text, command.insert_line, command.insert_text),
        )

    async def _edit(
        self, command: str, path: paths.MemoryPath, change: Callable[[str], tuple[str, str]]
    ) -> str:
        """Read, change, write with ``if_match``; when the file changed meanwhile, start
        again from the new text (the change may now fail, as it would have)."""
        async with self._store(command) as store:
            for _ in range(EDIT_ATTEMPTS):
                found = await store.load(path)
                if found is Kind.DIR:
                    raise ToolError(f"The path {path.shown} is not a file.")
                if isinstance(found, Kind):
                    raise ToolError(_no_such(path))
                if found.unreadable is not None:
                    raise ToolError(
                        f"{path.shown} cannot be edited: its frontmatter block cannot be read"
                        f" ({found.unreadable}); fix the block in the vault first"
                    )
                new_text, answer = change(found.text)
                new_text.encode("utf-8")  # the SDK's error for text that UTF-8 cannot hold
                try:
                    await store.save(path, new_text, found.meta, found.etag)
                except Changed:
                    continue
                return answer
        raise ToolError(
            f"conflict: {path.shown} kept changing while it was being edited (by a person or "
            "another agent); nothing was changed: view it and try again"
        )

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = paths.check(command.path)
        if path.is_root:
            raise ToolError("Cannot delete the /memories directory itself")
        path.usable()
        async with self._store("delete") as store:
            kind = await store.kind(path.parts, path.shown)
            if kind not in (Kind.FILE, Kind.DIR):
                raise ToolError(f"The path {command.path} does not exist")
            await store.delete(path, kind)
        return f"Successfully deleted {command.path}"

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old = paths.check(command.old_path)
        new = paths.check(command.new_path)
        if old.is_root:
            raise ToolError("Cannot rename the /memories directory itself")
        new.usable()
        old.usable()
        async with self._store("rename") as store:
            destination = await store.kind(new.parts, new.shown)
            if destination in (Kind.FILE, Kind.DIR):
                raise ToolError(f"The destination {command.new_path} already exists")
            # The SDK makes the new parent folder first (a file on the way: ENOTDIR), then
            # meets rename(2)'s errors in its order, on a tree that has that folder. We
            # make nothing before the move: a path it would have made counts as a folder.
            new_parent = await store.kind(new.parent, new.shown)
            if new_parent is Kind.BLOCKED:
                raise OSError(20, "Not a directory")

            async def after_mkdir(target: paths.MemoryPath, parts: tuple[str, ...]) -> Kind:
                kind = await store.kind(parts, target.shown)
                made = kind is Kind.MISSING and new.parent[: len(parts)] == parts
                return Kind.DIR if made else kind

            old_parent = await after_mkdir(old, old.parent)
            if old_parent is Kind.MISSING:
                raise ToolError(f"The path {command.old_path} does not exist")
            if old_parent is not Kind.DIR or new_parent is Kind.FILE:
                raise OSError(20, "Not a directory")
            source = await after_mkdir(old, old.parts)
            if source is Kind.MISSING:
                raise ToolError(f"The path {command.old_path} does not exist")
            if source is Kind.DIR and new.inside(old):
                raise OSError(22, "Invalid argument")
            if not await store.has_tool("move"):
                raise ToolError(
                    "unsupported: this indexer has no `move` tool yet (it comes with note "
                    f"history); {command.old_path} was not renamed"
                )
            retype = source is Kind.FILE and is_note(old.name) != is_note(new.name)
            if retype:
                await store.load(old)  # a file that is not UTF-8 is refused before the move
            try:
                await store.move(old, new)
            except Changed:
                raise ToolError(f"The destination {command.new_path} already exists") from None
            if retype:
                try:
                    await self._retype(store, old, new)
                except ToolError as err:  # e.g. too large once a note: a refusal moves nothing
                    try:
                        await store.move(new, old)
                    except (ToolError, Changed):
                        raise ToolError(f"{err} (the file is at {command.new_path})") from None
                    raise ToolError(f"{err}; {command.old_path} was not renamed") from None
        return f"Successfully renamed {command.old_path} to {command.new_path}"

    async def _retype(
        self, store: MemoryStore, old: paths.MemoryPath, new: paths.MemoryPath
    ) -> None:
        """A file renamed between ``.md`` and another text type shows the same text: a
        note's body loses its frontmatter, a text file becomes a note's body."""
        for _ in range(EDIT_ATTEMPTS):
            found = await store.load(new)
            if isinstance(found, Kind):
                return
            as_before = files.seen(old.name, found.raw, found.etag).text
            try:
                await store.save(new, as_before, {}, found.etag)
                return
            except Changed:
                continue

    async def clear_all_memory(self) -> str:
        """Delete everything in the memory folder (the folder stays). Files of another
        program that no tool reaches stay, with their folders: the answer says so."""
        async with self._store("clear_all_memory") as store:
            left, sample = await store.delete(paths.check(paths.ROOT), Kind.DIR)
        return texts.cleared_but(left, sample) if left else "All memory cleared"


class VaultMemoryTool(BetaAbstractMemoryTool):
    """The sync memory tool (for ``client.beta.messages.tool_runner``): the same commands
    as ``AsyncVaultMemoryTool``, run on a private event loop thread."""

    def __init__(
        self,
        lang: str,
        *,
        folder: str = "memories",
        settings: ClientSettings | None = None,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self._tool = AsyncVaultMemoryTool(lang, folder=folder, settings=settings)
        self._loop = _LoopThread(f"vault-memory-tool-{self._tool.lang}")
        self._finalizer = weakref.finalize(self, self._loop.stop, self._tool.aclose)

    @property
    def lang(self) -> str:
        return self._tool.lang

    @property
    def folder(self) -> str:
        return self._tool.folder

    def close(self) -> None:
        """Close the MCP session and stop the private thread (a later command starts
        them again)."""
        self._loop.stop(self._tool.aclose)

    def __enter__(self) -> VaultMemoryTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._loop.run(self._tool.view(command))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._loop.run(self._tool.create(command))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._loop.run(self._tool.str_replace(command))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._loop.run(self._tool.insert(command))

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._loop.run(self._tool.delete(command))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._loop.run(self._tool.rename(command))

    def clear_all_memory(self) -> str:
        return self._loop.run(self._tool.clear_all_memory())


class _LoopThread:
    """An event loop running in a daemon thread, started on first use."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._guard = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the private loop and wait for its result (or its exception)."""
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError("a VaultMemoryTool cannot be called from its own event loop")
        return asyncio.run_coroutine_threadsafe(coro, self._start()).result()

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def stop(self, last: Any = None) -> None:
        """Run ``last()`` (a coroutine function, e.g. closing the session), then stop."""
        with self._guard:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None or thread is None:
            return
        if last is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(last(), loop).result(timeout=5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)
        if not thread.is_alive():
            loop.close()


def _let_go(keeper: SessionKeeper, loop: asyncio.AbstractEventLoop | None) -> LeftSession | None:
    """The session of the event loop a tool leaves, for the new loop to end on the server
    (``end_left``): its connection's objects belong to the old loop, which ``asyncio.run``
    closed, and cannot be awaited on another. Not while that loop still runs (in another
    thread): a command of it may be using the session; it stays open there."""
    if loop is not None and loop.is_running():
        return None
    return keeper.abandon()


def _is_utf8(text: object) -> bool:
    """A str that UTF-8 can encode (no lone surrogates)."""
    if not isinstance(text, str):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _no_such(path: paths.MemoryPath) -> str:
    return f"The path {path.shown} does not exist. Please provide a valid path."


def _clean_folder(folder: str) -> str:
    """The memory folder as a vault path (``memories``, ``agents/claude``), in NFC as the
    vault names it; one the vault would refuse below it is refused here, once, rather
    than at every command (whose refusal would name the model's /memories)."""
    folder = unicodedata.normalize("NFC", folder.strip())
    parts = [p for p in folder.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or parts[0].startswith("~"):  # (the vault reads ~ as home)
        raise ValueError(f"the memory folder must be a folder inside the vault, not {folder!r}")
    try:
        for char in folder:
            check_char(char)
        for part in parts:
            check_segment(part)
    except ForbiddenPathError as err:
        raise ValueError(f"the memory folder {folder!r} cannot hold notes: {err.message}") from None
    if any(p.endswith(".assets") for p in parts):
        raise ValueError(
            f"the memory folder {folder!r} cannot hold notes: a *.assets folder holds a"
            " note's images"
        )
    if len(parts) > MAX_FOLDER_DEPTH or len(folder.encode("utf-8")) > MAX_FOLDER_BYTES:
        raise ValueError(
            f"the memory folder is deeper than {MAX_FOLDER_DEPTH} folders or longer than"
            f" {MAX_FOLDER_BYTES} bytes (the vault's paths are at most {MAX_DEPTH} names"
            f" and {MAX_PATH_BYTES} bytes)"
        )
    return "/".join(parts)


def _offline_outcome(store: MemoryStore | None) -> str:
    """What a command cut short by the indexer going offline did: a change whose answer
    never came may have been made (``MemoryStore.unsure``): the model is told to look
    before doing it again (an ``str_replace`` made twice, or a create)."""
    if store is not None and store.changed:
        return f"the command stopped part way ({store.progress()}): view the path"
    if store is not None and store.unsure:
        return "its change may or may not have been made: view the path before trying again"
    return "nothing was changed"
