"""The vault tools' behaviour, independent of MCP: read, write, stat, append, find, grep,
delete, and with history: history, diff, restore, move, undo.

Every method checks its whole input before touching the disk, so a refusal (a
``VaultError``) changes nothing. Every file operation goes through ``Sandbox.open``: by
folder descriptors, never by path strings, so a folder swapped for a link mid-call is
refused rather than followed. Writes, appends and deletes of one file are serialized
by a per-file lock (the tools run in a thread pool); each change is recorded in
history under that lock (``recording``); after each change the listeners (the index)
are told synchronously, so a search right after a write finds it. ``if_match`` is
checked when the call starts and again right before the new file is swapped in
(``atomic.replace_at``: under a read lease, with ``renameat2``); what remains of the
lost-update window is said there.

The read-only tools live in ``reading`` (read, stat, find, grep), the bytes' checks
(size limit, images, frontmatter normalization) in ``contents``, the history views and
operations in ``timeline`` (history, diff, restore) and ``undo``, ``outside`` (external
changes), ``moves`` (of a file or a folder), ``deletes``; the methods here delegate to them,
so that the tools' surface stays in one class while this module keeps the changes: write
and append, with the per-file locks and the telling of the index and listeners.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from indexer.vault import (
    contents,
    deletes,
    folder_listing,
    fsops,
    moves,
    outside,
    reading,
    recheck,
    telling,
    timeline,
    undo,
)
from indexer.vault.backlinks import relink_after_move
from indexer.vault.body_sizes import BodySizes
from indexer.vault.contents import APPENDABLE, WRITABLE
from indexer.vault.digests import Digests
from indexer.vault.history.store import Change, HistoryStore
from indexer.vault.locks import VaultLocks
from indexer.vault.reading import (
    FIND_SIZES_MAX_SECONDS,
    GREP_MAX_BYTES,
    GREP_MAX_SECONDS,
    GrepPlanner,
)
from indexer.vault.recording import Recorder, check_actor, check_reason
from indexer.vault.sandbox import Place, Sandbox, Target
from indexer.vault.telling import ChangeListener, IndexSync
from shared.errors import (
    ConflictError,
    ForbiddenPathError,
    InvalidArgumentError,
    NotFoundError,
    VaultError,
)
from shared.utf8 import NOT_UTF8_TEXT, check_text, is_utf8

log = logging.getLogger("indexer.vault")
Clock = Callable[[], datetime]


WRITE_ATTEMPTS = 3  # a write without if_match, over a file another program keeps saving


class Vault:
    """The tools' logic over every lang's vault of one workspace."""

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        max_file_bytes: int,
        clock: Clock | None = None,
        history: HistoryStore | None = None,
    ):
        self.sandbox = sandbox
        self.max_file_bytes = max_file_bytes
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self.recorder = Recorder(history, lambda: self.clock())
        self.listeners: list[ChangeListener] = []
        self.index_sync: IndexSync | None = None  # told first, before the listeners
        self.grep_planner: GrepPlanner | None = None
        self.folder_counter: folder_listing.FolderCounter | None = None  # (an index's)
        self.digests = Digests()
        # A grep stops (truncated: true) past either budget, however slow its pattern.
        self.grep_max_seconds = GREP_MAX_SECONDS
        self.grep_max_bytes = GREP_MAX_BYTES
        # find(sizes=true): the notes' bodies measured, and the time one call may measure.
        self.body_sizes = BodySizes()
        self.find_sizes_max_seconds = FIND_SIZES_MAX_SECONDS
        self._locks = VaultLocks()

    # -- reading (``reading``) -------------------------------------------------------

    def read(
        self,
        lang: str,
        path: str,
        offset: int = 0,
        limit: int | None = None,
        version: int | None = None,
    ) -> dict:
        """A file's content (a slice of lines with offset/limit), or an older version."""
        return reading.read(self, lang, path, offset, limit, version)

    def stat(self, lang: str, path: str) -> dict:
        return reading.stat(self, lang, path)

    def head(self, lang: str, path: str, max_bytes: int = reading.HEAD_MAX_BYTES) -> dict:
        """A file's first bytes, whatever its size (``reading.head``)."""
        return reading.head(self, lang, path, max_bytes)

    def find(
        self,
        lang: str,
        pattern: str = "**/*.md",
        path: str = "",
        limit: int = 200,
        dirs: bool = False,
        sizes: bool = False,
        after: str | None = None,
        paged: bool = False,
    ) -> dict:
        """Files (and with ``dirs`` folders) below ``path`` whose path matches ``pattern``;
        with ``sizes``, their sizes and notes' body sizes; a page ``after`` a path
        (``reading.find``)."""
        return reading.find(self, lang, pattern, path, limit, dirs, sizes, after, paged)

    def list_folder(
        self, lang: str, path: str = "", limit: int = reading.MAX_LIMIT, after: str | None = None
    ) -> dict:
        """A folder's own files (a page ``after`` a path) and its subfolders with their
        counts, in one walk (``folder_listing``)."""
        return folder_listing.list_folder(self, lang, path, limit, after=after)

    def grep(
        self,
        lang: str,
        pattern: str,
        path: str = "",
        glob: str = "**/*.md",
        fixed: bool = False,
        ignore_case: bool = False,
        limit: int = 100,
        *,
        deadline: float | None = None,
    ) -> dict:
        """Matching lines; ``deadline`` (``time.monotonic``) ends the scan."""
        return reading.grep(
            self, lang, pattern, path, glob, fixed, ignore_case, limit, deadline=deadline
        )

    # -- writing -------------------------------------------------------------------

    def write(
        self,
        lang: str,
        path: str,
        content: str,
        encoding: str = "utf-8",
        if_match: str | None = None,
        reason: str | None = None,
        *,
        actor: str = "tool",
        mode: int | None = None,
    ) -> dict:
        """(``mode``: the file's, for a job's file quoting narrower ones; None keeps it.)"""
        target = self._file_target(lang, path)
        reason = check_reason(reason)
        check_actor(actor)
        if not isinstance(content, str):
            raise InvalidArgumentError("content must be a string")
        if encoding == "utf-8":
            if not (target.is_note or target.is_text):
                raise ForbiddenPathError(f"only {WRITABLE} are writable")
            target.check_text_place()
            check_text("content", content)  # (it raised UnicodeEncodeError)
            data = content.encode("utf-8")
        elif encoding == "base64":
            data = contents.decode_image(target, content)
        else:
            raise InvalidArgumentError("encoding must be 'utf-8' or 'base64'")
        self._check_size(len(data))
        # Without ``if_match`` the last writer wins, but over what it read and recorded
        # only: a save by another program in between is read and recorded, then written
        # over (it was lost from history); it keeps changing: ``conflict``. ``if_match="*"``
        # asks only that the file exist: the last writer wins as well.
        attempts = WRITE_ATTEMPTS if if_match in (None, fsops.ANY) else 1
        for attempt in range(attempts):
            try:
                return self._write_once(target, data, if_match, actor, reason, mode)
            except ConflictError:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def _write_once(
        self,
        target: Target,
        data: bytes,
        if_match: str | None,
        actor: str,
        reason: str | None,
        mode: int | None = None,
    ) -> dict:
        with self.locked(self._with_owner(target)), self.sandbox.open(target) as place:
            place.mode = mode
            existing = self._existing_bytes(place)
            fsops.check_if_match(if_match, existing)
            if target.is_note:
                data = self._normalized(target, data.decode("utf-8"), existing)
            if target.is_asset:
                etag, sha = fsops.etag_of(data), None
            else:  # a text file: what its next append starts from
                hashes = self.digests.of((target.lang, target.rel), data)
                etag, sha = hashes.etag, hashes.sha
            if data != existing:
                self._commit_recorded(place, existing, data, etag, sha, actor, reason)
            self._notify(target, left=etag)
        return {
            "path": target.rel,
            "etag": etag,
            "created": existing is None,
            "size": len(data),
        }

    def _commit_recorded(
        self,
        place: Place,
        existing: bytes | None,
        data: bytes,
        etag: str,
        sha: bytes | None,
        actor: str,
        reason: str | None,
    ) -> None:
        """``data`` (its ``etag`` and ``sha``) replaces ``existing``, the bytes read
        under the file's lock (None: no file), recorded as one version: a write's end,
        and a rewrite of another note's links after a move (``backlinks``)."""
        target = place.target
        key = (target.lang, target.rel)
        before_etag = None if existing is None else self.digests.known_etag(key, existing)
        change = Change(
            target.lang,
            target.rel,
            "write",
            existing,
            data,
            after_etag=etag,
            after_sha=sha,
            before_etag=before_etag,
        )
        read = "" if existing is None else before_etag or fsops.etag_of(existing)
        with self.recorder.changing([change], actor=actor, reason=reason):
            place.commit(data, if_match=read)

    def append(
        self,
        lang: str,
        path: str,
        content: str,
        create: bool = True,
        reason: str | None = None,
        *,
        actor: str = "tool",
        if_match: str | None = None,
    ) -> dict:
        """Raw append to an existing note; a note it creates is normalized like a write
        when the content starts with a frontmatter block (so it is a valid note). The
        text is added as sent (SPEC: "adds text to the end of a file without rewriting
        it"): a day file's preamble is the writer's ``write``, not the append's.
        ``if_match`` (REST's ``If-Match``): only to the file as the caller read it."""
        target = self._file_target(lang, path)
        reason = check_reason(reason)
        check_actor(actor)
        if not (target.is_note or target.is_text):
            raise ForbiddenPathError(f"only {APPENDABLE} can be appended to")
        target.check_text_place()
        if not isinstance(content, str) or not content:
            raise InvalidArgumentError("content must be a non-empty string")
        check_text("content", content)
        data = content.encode("utf-8")
        self._check_size(len(data))
        with self.locked([target]), self.sandbox.open(target) as place:
            existing = self._existing_bytes(place)
            fsops.check_if_match(if_match, existing)
            if existing is None and not create:
                raise NotFoundError(f"{target.rel} does not exist (create=false)")
            if existing and not is_utf8(existing):  # (a day file another program wrote)
                raise InvalidArgumentError(
                    f"{target.rel} {NOT_UTF8_TEXT}: UTF-8 appended to it would mix two"
                    " encodings; nothing was appended"
                )
            self._check_size(len(data) + (len(existing) if existing else 0))
            key = (target.lang, target.rel)
            if existing is None and target.is_note and content.lstrip("\ufeff").startswith("---"):
                whole = self._normalized(target, content, None)
                hashes = self.digests.of(key, whole)
                etag = hashes.etag
                change = Change(
                    target.lang,
                    target.rel,
                    "append",
                    None,
                    whole,
                    after_etag=etag,
                    after_sha=hashes.sha,
                )
                with self.recorder.changing([change], actor=actor, reason=reason):
                    place.commit(whole)
                size = len(whole)
            else:
                expected = (existing or b"") + data
                before_etag = None if existing is None else self.digests.known_etag(key, existing)
                hashes = self.digests.appended(key, existing or b"", data, expected)
                etag = hashes.etag
                change = Change(
                    target.lang,
                    target.rel,
                    "append",
                    existing,
                    expected,
                    after_etag=etag,
                    after_sha=hashes.sha,
                    before_etag=before_etag,
                )
                with self.recorder.changing([change], actor=actor, reason=reason):
                    try:
                        fd = place.make_parent()
                        appended = fsops.append_at(
                            fd, place.name, data, create=create, sync_dir=existing is None
                        )
                    except BaseException:
                        place.rollback()
                        raise
                size = appended.st_size
                try:
                    now: bytes | None = contents.read_bytes(place, self.max_file_bytes)[0]
                except NotFoundError:  # deleted by someone else right after the append
                    now = None
                except (VaultError, OSError):  # (made unreadable meanwhile: it has landed,
                    now = expected  # and an error said nothing changed; a retry doubled it)
                if now != expected:  # someone else wrote to the file meanwhile
                    if now is not None:
                        etag = self.digests.of(key, now).etag
                    self.recorder.observe(target.lang, target.rel, now, unknown=True)
            self._notify(target, appended=etag)
        return {"path": target.rel, "etag": etag, "size": size}

    def delete(
        self,
        lang: str,
        path: str,
        reason: str | None = None,
        *,
        actor: str = "tool",
        if_match: str | None = None,
    ) -> dict:
        """Delete a file (with a note's images) or an empty folder; ``if_match`` (REST's
        ``If-Match``): only the file as the caller read it, else ``conflict``."""
        return deletes.delete(self, lang, path, reason, actor, if_match)

    def _with_owner(self, target: Target) -> list[Target]:
        """``target``, and for an image the note whose ``.assets/`` holds it: a write of
        an image waits for a delete or a move of its note, which takes its whole folder."""
        if not target.is_asset:
            return [target]
        folder = "/".join(target.folders)
        return [target, self.sandbox.resolve(target.lang, folder.removesuffix(".assets"))]

    # -- history ---------------------------------------------------------------------

    def history(self, lang: str, path: str, limit: int = 20) -> dict:
        """Versions of a file, newest first (also of a deleted one)."""
        return timeline.history(self, lang, path, limit)

    def diff(self, lang: str, path: str, from_version: int, to_version: int | None = None) -> dict:
        """Unified diff from a version to another one, or to the current file."""
        return timeline.diff(self, lang, path, from_version, to_version)

    def restore(
        self,
        lang: str,
        path: str,
        version: int,
        if_match: str | None = None,
        reason: str | None = None,
        *,
        actor: str = "tool",
    ) -> dict:
        """Write a version's exact bytes back (a deleted note comes back with its images)."""
        return timeline.restore(self, lang, path, version, if_match, reason, actor)

    def move(
        self,
        lang: str,
        path: str,
        new_path: str,
        if_match: str | None = None,
        reason: str | None = None,
        *,
        actor: str = "tool",
    ) -> dict:
        """Move a file (a note with its .assets/ folder and links) or a folder; the links
        to them in other notes follow (``backlinks``)."""
        moved = moves.move(self, lang, path, new_path, if_match, reason, actor)
        relink_after_move(self, lang, moved, reason, actor)
        return moved

    def undo(self, lang: str, entry_id: str, dry_run: bool = False) -> dict:
        """Put back every file an entry's writes changed, all or nothing."""
        return undo.undo(self, lang, entry_id, dry_run)

    def observe_external(self, lang: str, path: str, *, unknown: bool = True) -> None:
        """Record a change made outside the tools (told by the watcher or the reconcile)."""
        outside.observe_external(self, lang, path, unknown=unknown)

    def recheck_history(
        self,
        stop: Callable[[], bool],
        indexed: Callable[[], Iterable[tuple[str, str, str]]] | None = None,
    ) -> bool:
        """Record what differs between history and disk (after a crash, in the background;
        ``indexed``: the index's files, see ``recheck.recheck``)."""
        return recheck.recheck(self, stop, indexed)

    def recover_history(self) -> tuple[int, int]:
        """Settle the versions a crash left pending (at start-up, before serving)."""
        return outside.recover(self)

    def note_counts(self) -> dict[str, int]:
        """Notes per lang by walking the vaults (the index gives this faster)."""
        return reading.note_counts(self.sandbox)

    # -- helpers -------------------------------------------------------------------

    def _file_target(self, lang: str, path: str, *, summary: bool = False) -> Target:
        """A file's target (``summary``: a folder's ``.overview.md`` too)."""
        return self.sandbox.resolve_file(lang, path, summary=summary)

    def _lock(self, target: Target) -> threading.Lock:
        """The file's own lock alone (recording what changed outside the tools)."""
        return self.file_lock(target.lang, target.rel)

    def file_lock(self, lang: str, rel: str) -> threading.Lock:
        """A file's own lock, for a job that writes and records a file the tools do not (a
        folder's summary): held while it records, as ``observe_external`` holds it."""
        return self._locks.file(lang, rel)

    @contextmanager
    def locked(self, targets: list[Target], *, alone: str | None = None) -> Iterator[None]:
        """Hold the locks of the files a change touches, and their vault shared (the vault
        of lang ``alone`` alone: a folder move, which new files must not enter). Once they
        are let go, the change's versions are marked final, before it is answered (out of
        the locks: the next change of the file often marks them in its own transaction)."""
        try:
            with self._locks.held([(t.lang, t.rel) for t in targets], alone=alone):
                yield
        finally:
            self.recorder.settle()

    def _notify(
        self,
        target: Target,
        rel: str | None = None,
        *,
        appended: str | None = None,
        left: str | None = None,
    ) -> None:
        """Tell the index, then the listeners, that ``rel`` (default: the target) changed
        (``telling.tell``: ``appended`` by an append, which left this etag; ``left``: a
        write left it)."""
        rel = target.rel if rel is None else rel
        index, listeners = self.index_sync, self.listeners
        telling.tell(index, listeners, target.lang, rel, appended=appended, left=left)

    def _notify_all(self, targets: Iterable[Target]) -> None:
        """Tell of many files one call changed, together (``telling.tell_all``)."""
        keys = [(target.lang, target.rel) for target in targets]
        telling.tell_all(self.index_sync, self.listeners, keys)

    def _check_size(self, size: int) -> None:
        contents.check_size(size, self.max_file_bytes)

    def _existing_bytes(self, place: Place) -> bytes | None:
        """The current content of a write's target, or None; refuses hard-linked files."""
        return contents.existing_bytes(place, self.max_file_bytes)

    def _normalized(self, target: Target, text: str, existing: bytes | None) -> bytes:
        return contents.normalized_note(target, text, existing, self.clock(), self.max_file_bytes)
