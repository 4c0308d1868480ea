"""A vault folder as its summary sees it, and the one write of ``<folder>/.overview.md``.

Folders are walked by descriptor from the vault root (``O_NOFOLLOW`` at every level, as
the tools do), never by path string. A note's abstract and type come from its index row
(no re-parsing of a vault that did not change; the index is kept current, and each of
its changes marks the folder dirty again), else from the file itself; a note that
cannot be read as text is skipped with a warning, once per file and size
(``summary_skips``).

``SummaryFiles.commit`` is the only place that writes or removes a summary file (but
for the ``delete`` tool on an emptied folder, which takes its summary along): the route
a history of versions can later take (actor ``job:summaries``). Summaries are derived
data, written atomically but without fsync: one lost in a crash is made again.
"""

from __future__ import annotations

import codecs
import json
import logging
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

from indexer.index.abstract import note_abstract, past_broken_block
from indexer.index.service import IndexedNote, NoteIndex
from indexer.jobs.folder_changes import check_unchanged, entry_names
from indexer.jobs.summary_modes import removed_mode, summary_mode
from indexer.jobs.summary_skips import SKIPS_FILE, SkipsSaid
from indexer.jobs.summary_texts import Child, note_category
from indexer.vault import atomic, fsops, renames
from indexer.vault.history.rows import Change
from indexer.vault.lone_summaries import MAX_SUMMARY_BYTES, is_summary
from indexer.vault.names import MAX_DEPTH, MAX_PATH_BYTES
from indexer.vault.recording import Recorder
from indexer.vault.sandbox import Sandbox
from indexer.vault.scan import list_folder, stored_ns
from shared.errors import ConflictError, ForbiddenPathError, InvalidFrontmatterError
from shared.frontmatter import (
    normalize_frontmatter_text,
    render_note,
    title_from_body,
)
from shared.frontmatter_reader import read_frontmatter
from shared.langs import check_lang
from shared.timestamps import format_timestamp
from shared.workspace import OVERVIEW_FILE

log = logging.getLogger("indexer.jobs.summaries")
HEAD_BYTES = 256 * 1024  # enough of a note for its frontmatter and first paragraph
KEPT_NAME = "overview-by-hand.md"  # what a hand-written .overview.md becomes
Written = Callable[[str, str], None]
FileLock = Callable[[str, str], AbstractContextManager[Any]]


EDIT_SLACK_SECONDS = 5.0  # a save this long after the job's write was made by someone


@dataclass(frozen=True)
class Summary:
    """A folder's summary: what ``.overview.md`` holds (``updated`` None: not written)."""

    folder: str
    abstract: str
    overview: str
    child_count: int
    categories: list[str]
    children_digest: str
    generated_by: str  # "llm" | "fallback"
    updated: str | None = None
    mtime_ns: int = 0
    note_id: str | None = None  # the file's id and created, kept when it is rewritten
    created: str | None = None

    def saved_after_written(self) -> bool:
        """Whether the file was saved well after the job wrote it (its ``updated``):
        edited by hand. A summary ``indexer summarize`` wrote beside the server (heard as
        a change by others too) was saved as it was written, and is kept. A save well
        *before* its stamp is no write of the job's either: a clock stepped back since,
        or an edit synced from a machine whose clock is behind (the sync keeps its mtime)
        was kept for good."""
        if self.updated is None:
            return True
        try:
            written = datetime.fromisoformat(self.updated.replace("Z", "+00:00"))
        except ValueError:
            return True  # no time of ours: not as the job wrote it
        return abs(self.mtime_ns / 1e9 - written.timestamp()) > EDIT_SLACK_SECONDS

    def as_child(self) -> Child:
        """What the parent folder's summary sees of this one."""
        name = PurePosixPath(self.folder).name if self.folder else ""
        return Child(name + "/", self.abstract, "folder", self.mtime_ns)

    def result(self, stale: bool) -> dict[str, Any]:
        """The ``summary`` tool's answer."""
        return {
            "path": self.folder,
            "abstract": self.abstract,
            "overview": self.overview,
            "child_count": self.child_count,
            "categories": list(self.categories),
            "generated_by": self.generated_by,
            "updated": self.updated,
            "stale": stale,
        }


@dataclass
class FolderInput:
    """One folder's listing: readable notes as children, subfolder names, the notes that
    could not be read, and the summary it has now (None: none)."""

    notes: list[Child] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    summary: Summary | None = None
    names: frozenset[str] | None = None  # its entries when listed (``folder_changes``)


def render_summary(summary: Summary, existing: Summary | None, now: datetime) -> bytes:
    """The normalized text of ``.overview.md`` (the model's words are YAML string values
    and body text: they cannot break the frontmatter); ``existing``'s id and created stay."""
    meta: dict[str, Any] = {
        "id": existing.note_id if existing is not None else None,
        "title": f"{summary.folder}/" if summary.folder else "/",
        "type": "summary",
        "abstract": summary.abstract,
        "child_count": summary.child_count,
        "categories": list(summary.categories),
        "children_digest": summary.children_digest,
        "generated_by": summary.generated_by,
    }
    if existing is not None and existing.created:
        meta["created"] = existing.created
    text = render_note({k: v for k, v in meta.items() if v is not None}, summary.overview)
    try:
        return normalize_frontmatter_text(text, now=now, stem="overview").encode()
    except InvalidFrontmatterError:
        if existing is None:
            raise
        return render_summary(summary, None, now)  # an odd id or created (edited by hand)


def parse_summary(folder: str, text: str, mtime_ns: int) -> Summary:
    """A summary file's fields (lenient: odd values become empty ones, and an empty
    digest makes the next pass write it again)."""
    meta, body = read_frontmatter(text)
    return summary_from(folder, meta, body, mtime_ns)


def summary_from(folder: str, meta: dict[str, Any], body: str, mtime_ns: int) -> Summary:
    """A ``Summary`` of a summary file's frontmatter and body (as read, or as indexed)."""

    def string(key: str) -> str:
        value = meta.get(key)
        return value if isinstance(value, str) else ""

    count = meta.get("child_count")
    cats = meta.get("categories")
    updated, created = (
        format_timestamp(v) if isinstance(v, datetime) else (str(v) if v else None)
        for v in (meta.get("updated"), meta.get("created"))
    )
    note_id = meta.get("id")
    return Summary(
        folder=folder,
        abstract=string("abstract"),
        overview=body,
        child_count=count if isinstance(count, int) and not isinstance(count, bool) else 0,
        categories=[str(c) for c in cats] if isinstance(cats, list) else [],
        children_digest=string("children_digest"),
        generated_by=string("generated_by") or "fallback",
        updated=updated,
        mtime_ns=mtime_ns,
        note_id=str(note_id) if isinstance(note_id, str | int) and str(note_id).strip() else None,
        created=created,
    )


class SummaryFiles:
    """Reads vault folders for their summaries and writes ``.overview.md`` files."""

    def __init__(
        self,
        sandbox: Sandbox,
        index: NoteIndex | None = None,
        written: Written | None = None,
        recorder: Recorder | None = None,
        file_lock: FileLock | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.index = index
        self.written = written  # told (lang, path) after a summary file changed
        self.recorder = recorder  # history: each summary written is a version
        # The vault's lock of a file (lang, path), held while a summary is recorded: the
        # watcher records a change made beside the job (``indexer summarize`` while
        # served, a hand edit) under it; without it both took the same next version and
        # one failed (UNIQUE constraint), the whole pass or the record of the edit.
        self.file_lock: FileLock = file_lock or (lambda lang, path: nullcontext())
        # Told (lang, path) when the folder's summary must be made again: a note made of
        # a hand-written .overview.md (a child not counted yet), or a summary file that
        # changed while it was being written.
        self.redo: Written | None = None
        # The etag of each summary file as this job last wrote it (None: removed): the
        # watcher tells such a write as a change by others when it syncs the file before
        # the job does, and a pass's writes were taken for hand edits (``still_ours``).
        self._ours: dict[tuple[str, str], str | None] = {}
        self.skips = SkipsSaid(sandbox.workspace.state_dir / SKIPS_FILE)

    @contextmanager
    def folder(self, lang: str, folder: str) -> Iterator[int | None]:
        """The folder opened by descriptors from its vault root (which the operator may
        link elsewhere: the one path the kernel resolves); None when missing."""
        root = self.sandbox.workspace.vault_dir(check_lang(lang))
        with ExitStack() as stack:
            fd: int | None
            try:
                fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                fd = None
            else:
                stack.callback(os.close, fd)
            for segment in folder.split("/") if folder else []:
                if fd is None:
                    break
                try:
                    fd = fsops.open_dir(segment, fd)
                except (OSError, ForbiddenPathError):
                    fd = None
                    break
                stack.callback(os.close, fd)
            yield fd

    def read(self, lang: str, folder: str) -> FolderInput | None:
        """The folder's children and current summary; None when the folder is missing."""
        with self.folder(lang, folder) as fd:
            if fd is None:
                return None
            found = FolderInput(names=entry_names(fd))  # (before the listing: any change after)
            # The walker's listing: only names every tool accepts (NFC; the others are
            # skipped with a warning), so no summary counts or goes where no tool can.
            prefix = f"{folder}/" if folder else ""
            files, folders = list_folder(fd, prefix, hidden_files=True)
            has_summary = any(name == OVERVIEW_FILE for name, _ in files)
            depth = folder.count("/") + 1 if folder else 0  # names in the folder's path
            notes = {name: entry.name for name, entry in files if _is_note_name(name)}
            if depth + 1 > MAX_DEPTH:
                notes = {}  # too deep for every tool (find, read, the index) to reach
            if folder.count("/") + 2 < MAX_DEPTH:  # a subfolder's summary is one deeper
                found.folders = [
                    name
                    for name, _ in folders
                    if not name.endswith(".assets") and _summary_fits(prefix + name)
                ]
            rows = self.index.folder_notes(lang, folder) if self.index else {}
            for name, on_disk in sorted(notes.items()):
                child = self._note(fd, on_disk, rows.get(name), name)
                if child is None and _gone(fd, on_disk):
                    continue  # deleted since the listing (rm -rf, a checkout): no child
                if child is None:
                    rel = f"{folder}/{name}" if folder else name
                    self.skips.skipped(lang, rel, _size(fd, on_disk))
                    found.unreadable.append(name)
                else:
                    found.notes.append(child)
            found.folders.sort()
            if has_summary:
                found.summary = self._indexed_summary(fd, folder, rows.get(OVERVIEW_FILE))
            return found

    def read_summary(self, lang: str, folder: str) -> Summary | None:
        """The folder's current summary, or None (no file, or no folder)."""
        with self.folder(lang, folder) as fd:
            return self._summary_at(fd, folder) if fd is not None else None

    def commit(
        self, lang: str, folder: str, data: bytes | None, listed: frozenset[str] | None = None
    ) -> bool:
        """Write (``data``) or remove (None) ``<folder>/.overview.md``, atomically, then
        tell ``written``. The one write of summary files (history hooks in here).
        ``FolderChangedError`` when the folder's names are no longer ``listed``.

        Returns False when the folder is gone (nothing to do)."""
        rel = f"{folder}/{OVERVIEW_FILE}" if folder else OVERVIEW_FILE
        with self.folder(lang, folder) as fd:
            if fd is None:
                return False
            if data is not None:  # (a removal never keeps a folder from being removed)
                check_unchanged(fd, listed)
            found = fsops.lstat_at(OVERVIEW_FILE, fd)
            link = found is not None and stat.S_ISLNK(found.st_mode)
            if (
                found is not None
                and not link
                and (not stat.S_ISREG(found.st_mode) or found.st_size > MAX_SUMMARY_BYTES)
            ):  # a conflict at every pass, each marking the folder again: a loop
                log.warning("%s/%s: a folder, a FIFO or over 4 MiB: left as it is", lang, rel)
                return True
            before = None if link else _read_bytes(fd, OVERVIEW_FILE)
            if before is not None and not is_summary(before, folder):
                if not self._keep_as_note(lang, folder, fd, before):
                    return True  # no name left to keep it under: left as it is
                before = None
            if before is None and data is None:
                return True
            op, gone = ("write", None) if data is not None else ("delete", removed_mode(found, fd))
            change = Change(lang, rel, op, before, data, mode=gone)
            # Only over what was read: a save by hand meanwhile (into the place a kept
            # file left, say) is read at the next pass, not overwritten.
            # (A link is replaced as it is: its target is never written.)
            if_match = None if link else "" if before is None else fsops.etag_of(before)
            try:
                with (
                    self.file_lock(lang, rel),
                    self._recorder().changing(
                        [change], actor="job:summaries", reason="folder summary"
                    ),
                ):
                    if data is not None:  # derived data: one lost in a crash is made again
                        mode = summary_mode(fd)  # (no more open than what it quotes)
                        atomic.replace_at(
                            fd, OVERVIEW_FILE, data, mode=mode, if_match=if_match, durable=False
                        )
                    else:
                        os.unlink(OVERVIEW_FILE, dir_fd=fd)
                self._recorder().settle()  # (as a tool's change is: final at once)
            except ForbiddenPathError as err:  # (made read-only by a person: theirs now)
                log.warning("%s/%s: %s: left as it is", lang, rel, err.message)
                return True
            except ConflictError:
                log.info("%s/%s: the summary file changed meanwhile: done again", lang, rel)
                if self.redo is not None:
                    self.redo(lang, rel)
                return True
        self._ours[(lang, rel)] = fsops.etag_of(data) if data is not None else None
        if self.written is not None:
            self.written(lang, rel)
        return True

    def still_ours(self, lang: str, rel: str) -> bool:
        """Whether the summary file ``rel`` is as this job last wrote (or removed) it: a
        change of it heard since is the job's own, not an edit to redo."""
        if (lang, rel) not in self._ours:
            return False
        folder, _, name = rel.rpartition("/")
        if name != OVERVIEW_FILE:
            return False
        with self.folder(lang, folder) as fd:
            data = _read_bytes(fd, OVERVIEW_FILE) if fd is not None else None
        return self._ours.get((lang, rel), "") == (
            fsops.etag_of(data) if data is not None else None
        )

    def _keep_as_note(self, lang: str, folder: str, fd: int, data: bytes) -> bool:
        """A ``.overview.md`` someone wrote (not a summary: no ``type: summary``) is the
        user's text, and no tool reaches a dot-file: it becomes the note
        ``overview-by-hand.md`` (``-2``, ... when taken) before a summary takes its place."""
        whole = len(data) <= MAX_SUMMARY_BYTES  # else grown since it was read: recorded lazily
        recorder = self._recorder(history=whole)
        for number in range(1, 1000):
            name = KEPT_NAME if number == 1 else KEPT_NAME.replace(".md", f"-{number}.md")
            rel = f"{folder}/{name}" if folder else name
            change = Change(lang, rel, "write", None, data)
            try:
                with recorder.changing(
                    [change], actor="job:summaries", reason="a hand-written .overview.md kept"
                ):
                    renames.rename_noreplace(fd, OVERVIEW_FILE, name)
                recorder.settle()  # (the person's text: its version final at once)
            except FileExistsError:
                continue
            log.warning("%s/%s: written by hand, not by this job: kept as %s", lang, folder, rel)
            for told in (self.written, self.redo):
                if told is not None:
                    told(lang, rel)
            return True
        log.warning("%s/%s: a hand-written .overview.md, and no name left to keep it", lang, folder)
        return False

    def _recorder(self, *, history: bool = True) -> Recorder:
        """The history recorder, or one that records nothing (no history here)."""
        if history and self.recorder is not None:
            return self.recorder
        return Recorder(None, lambda: datetime.now(UTC))

    def _note(self, fd: int, on_disk: str, row: IndexedNote | None, name: str) -> Child | None:
        """A note as a child (``name``, as the tools name it; ``on_disk``, as spelled
        there): from its index row (kept current by the index, whose every change marks
        the folder dirty again), else from the file; None when it cannot be read as text
        (not UTF-8, too large, or the file cannot be opened)."""
        if row is not None:
            if not row.exact:
                return None
            return Child(name, row.abstract, note_category(row.type), row.changed_ns)
        got = _read_head(fd, on_disk)
        if got is None:
            return None
        text, changed_ns = got
        meta, body = read_frontmatter(text)
        if body is text:  # (no block, or one that cannot be read: not the abstract)
            body = past_broken_block(text)
        title = meta.get("title")
        if not isinstance(title, str) or not title.strip():
            title = title_from_body(body) or PurePosixPath(name).stem
        abstract = note_abstract(meta, body, title)
        return Child(name, abstract, note_category(meta.get("type")), changed_ns)

    def _indexed_summary(self, fd: int, folder: str, row: IndexedNote | None) -> Summary | None:
        """The folder's summary from its index row when that is current, else its file."""
        try:
            info = os.stat(OVERVIEW_FILE, dir_fd=fd, follow_symlinks=False)
        except OSError:
            return None
        if row is None or row.frontmatter is None or row.mtime_ns != stored_ns(info.st_mtime_ns):
            return self._summary_at(fd, folder)
        meta = json.loads(row.frontmatter)
        meta = meta if isinstance(meta, dict) else {}
        return summary_from(folder, meta, "", info.st_mtime_ns)  # the overview is not needed

    def _summary_at(self, fd: int, folder: str) -> Summary | None:
        try:
            file_fd = fsops.open_regular(OVERVIEW_FILE, fd)
        except (OSError, ForbiddenPathError):
            return None
        with fsops.opened(file_fd):
            try:
                info = os.fstat(file_fd)
                data = fsops.read_all(file_fd, HEAD_BYTES)
            except OSError:
                return None
        return parse_summary(folder, data.decode("utf-8", "replace"), info.st_mtime_ns)


def _summary_fits(folder: str) -> bool:
    """Whether ``<folder>/.overview.md`` is a path every tool takes (a summary longer
    than ``MAX_PATH_BYTES`` could be written, then never read, listed or undone)."""
    return len(f"{folder}/{OVERVIEW_FILE}".encode()) <= MAX_PATH_BYTES


def _is_note_name(name: str) -> bool:
    return name.endswith(".md") and not name.startswith(".")


def _size(dir_fd: int, name: str) -> int:
    """The size of ``name`` in the folder ``dir_fd``, -1 when it cannot be told."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_size
    except OSError:
        return -1


def _gone(dir_fd: int, name: str) -> bool:
    """Whether ``name`` is no longer in the folder ``dir_fd`` (deleted since it was
    listed), as opposed to a file there that cannot be read."""
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def _read_head(dir_fd: int, name: str) -> tuple[str, int] | None:
    """The first ``HEAD_BYTES`` of a regular file as text, and when it last changed
    (``Child.changed_ns``); None when it cannot be read or is not UTF-8."""
    try:
        fd = fsops.open_regular(name, dir_fd)
    except (OSError, ForbiddenPathError):
        return None
    with fsops.opened(fd):
        try:
            data = fsops.read_all(fd, HEAD_BYTES)
            info = os.fstat(fd)
        except OSError:
            return None
    try:  # a character cut at the end of a long file's head is not an error
        text = codecs.getincrementaldecoder("utf-8")().decode(data[:HEAD_BYTES], final=False)
    except UnicodeDecodeError:
        return None
    return text, min(info.st_mtime_ns, info.st_ctime_ns)


def _read_bytes(fd: int, name: str) -> bytes | None:
    """The bytes of ``name`` in the folder ``fd`` (None when missing or unreadable)."""
    try:
        file_fd = fsops.open_regular(name, fd)
    except (OSError, ForbiddenPathError):
        return None
    with fsops.opened(file_fd):
        try:
            return fsops.read_all(file_fd, MAX_SUMMARY_BYTES)
        except OSError:
            return None
