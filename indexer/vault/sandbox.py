"""The one place that turns a tool's ``(lang, path)`` into an open folder inside a vault.

Policy (see the SPEC's "Sandbox"): the path string is checked first (no ``..``, no
absolute or ``~`` paths, no control or invisible characters, no hidden segments, byte
limits: ``indexer.vault.names``); nothing on disk is looked at until it passes. The one
hidden name a caller may let through (``summary=True``) is a folder's summary file,
``.overview.md``: the summaries job rewrites it, and history must reach the versions it
replaced (a hand edit) to read, diff and restore them. A name
stored in another Unicode form than the NFC the tools speak is reached as it is on
disk (``Place.name``), never doubled by a composed twin. Then ``Sandbox.open`` walks from a
descriptor of the real vault root, opening each existing folder with ``O_NOFOLLOW``
relative to its parent (``indexer.vault.fsops``): a symbolic link anywhere, swapped in at any
moment, is refused, and the operation itself uses the parent's descriptor and the final
name, never a path string.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from indexer.vault import atomic, fsops
from indexer.vault.names import (
    MAX_DEPTH,
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    check_char,
    check_segment,
    equivalent_name,
)
from shared.errors import (
    ForbiddenPathError,
    InvalidArgumentError,
    InvalidLangError,
    NotFoundError,
)
from shared.filetypes import NOTE_SUFFIX, is_asset_image_name, is_plain_text_name
from shared.langs import check_lang
from shared.workspace import OVERVIEW_FILE, Workspace, is_summary_path

FOLDER_ENDINGS = "'/', '/.' or '/..'"  # (how only a folder's path ends: ``names_folder``)
NOT_A_FILE = f"a file path must not end with {FOLDER_ENDINGS} (that names a folder)"
# What an emptied folder's removal takes with it (``Place.remove_empty_folder``).
OWN_SUMMARY = frozenset({OVERVIEW_FILE})


@dataclass(frozen=True)
class Target:
    """A checked path: ``rel`` is the clean vault-relative path; ``abs`` is for messages only.

    ``dir_only`` is set when the caller's path can only name a folder: it ends in ``/``,
    ``/.`` or ``/..`` (``a.md/.`` is no spelling of the file ``a.md``).
    """

    lang: str
    rel: str
    abs: Path
    vault_root: Path
    dir_only: bool = False

    @property
    def name(self) -> str:
        return self.rel.rsplit("/", 1)[-1]

    @property
    def folders(self) -> list[str]:
        """The folder segments above the final name."""
        return self.rel.split("/")[:-1] if self.rel else []

    @property
    def is_note(self) -> bool:
        return self.rel.endswith(NOTE_SUFFIX)

    @property
    def is_text(self) -> bool:
        """A plain text file (``.txt``, ``.json``...): written as sent, no frontmatter."""
        return is_plain_text_name(self.name)

    @property
    def in_assets(self) -> bool:
        """Below a ``*.assets/`` folder: a note's images (the tools put nothing else there)."""
        return any(folder.endswith(".assets") for folder in self.folders)

    def check_text_place(self) -> None:
        """``forbidden_path`` for a note or text file to be made inside ``*.assets/``: the
        folder of a note's images (one another program put there is a note all the same)."""
        if self.in_assets and not self.is_asset:
            raise ForbiddenPathError(
                "a *.assets/ folder holds a note's images only (the tools make no notes or"
                " text files there); choose a path outside it"
            )

    @property
    def is_asset(self) -> bool:
        """An image inside a ``*.assets/`` folder: the only writable non-note file."""
        return is_asset_image_name(self.rel)


def names_folder(path: object) -> bool:
    """Whether ``path`` ends as only a folder's name does: in ``/``, ``/.`` or ``/..``
    (``clean_relpath`` drops those; a file's spelling would be let through as the file)."""
    return isinstance(path, str) and (path.endswith("/") or path.rpartition("/")[2] in (".", ".."))


def clean_relpath(path: object, *, allow_root: bool = False, summary: bool = False) -> str:
    """Check a vault-relative path string; return it NFC-normalized, without ``.`` or
    empty segments and with no trailing slash. ``summary``: the path may also name a
    folder's summary file (``is_summary_path``), the one dot-file reached."""
    if not isinstance(path, str):
        raise ForbiddenPathError("the path must be a string")
    try:
        raw = path.encode("utf-8")
    except UnicodeEncodeError:
        raise ForbiddenPathError("the path is not valid UTF-8") from None
    if len(raw) > 4 * MAX_PATH_BYTES:  # (before the work below; NFD may be longer)
        raise ForbiddenPathError(f"the path is longer than {MAX_PATH_BYTES} bytes")
    for char in path:
        check_char(char)
    if path.startswith(("/", "~")):
        raise ForbiddenPathError("the path must be relative to the vault root")
    path = unicodedata.normalize("NFC", path)
    # Measured as the tools name it (NFC): a Mac's decomposed spelling is longer.
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        raise ForbiddenPathError(f"the path is longer than {MAX_PATH_BYTES} bytes")
    # ``./a.md`` and ``a//b.md`` are harmless spellings of ``a.md`` and ``a/b.md``, and
    # so is ``a/../b.md`` of ``b.md`` (resolved by name: no link on the way is followed);
    # a ``..`` above the vault's root leaves it.
    segments: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if not segments:
                raise ForbiddenPathError("the path leaves the vault (a '..' above its root)")
            segments.pop()
        elif segment not in ("", "."):
            segments.append(segment)
    if not segments:
        if allow_root:
            return ""
        raise ForbiddenPathError("a file path is required here, not the vault root")
    if len(segments) > MAX_DEPTH:
        raise ForbiddenPathError(
            f"the path has more than {MAX_DEPTH} names (at most {MAX_DEPTH - 1} folders deep)"
        )
    checked = segments[:-1] if summary and is_summary_path(segments) else segments
    for segment in checked:
        check_segment(segment)
    return "/".join(segments)


@dataclass
class Place:
    """A target opened inside its vault: the descriptor of its folder and its name there.

    ``base_fd`` is the deepest existing folder on the way (None while the vault itself is
    missing) and ``missing`` the folders still to create below it; ``make_parent`` creates
    them for a write, ``rollback`` removes what it made when the write then fails. Valid
    only inside ``Sandbox.open``'s block, which closes every descriptor.
    """

    target: Target
    stack: ExitStack
    sandbox: Sandbox
    base_fd: int | None = None
    missing: list[str] = field(default_factory=list)
    created: list[tuple[int, str]] = field(default_factory=list)
    disk_name: str | None = None  # the entry's own spelling when it is not NFC
    mode: int | None = None  # the file's mode (None: the one it replaces, or 0644 - umask)

    @property
    def name(self) -> str:
        """The target's name in its folder, as spelled on disk."""
        return self.disk_name or self.target.name

    @property
    def assets_name(self) -> str:
        """The name, as spelled on disk, of the target's ``.assets/`` folder (its images).

        The tools make that folder in NFC; a note stored in NFD (a Mac's spelling) still
        owns it, and a folder spelled like its note or in another form is found as well;
        with none, the NFC name a write would create."""
        wanted = self.target.name + ".assets"
        fd = self.dir_fd
        if fd is None:
            return wanted
        for name in dict.fromkeys((self.name + ".assets", wanted)):
            fits = len(name.encode("utf-8", "surrogateescape")) <= MAX_SEGMENT_BYTES
            if fits and fsops.lstat_at(name, fd) is not None:
                return name
        return equivalent_name(fd, wanted) or wanted

    @property
    def dir_fd(self) -> int | None:
        """The folder that holds the target, or None when it does not exist (yet)."""
        return self.base_fd if not self.missing else None

    def lstat(self) -> os.stat_result | None:
        """The target's own entry, or None when it is missing; a link or a special file
        (FIFO, device, socket) is refused, whenever it was swapped in."""
        if self.dir_fd is None:
            return None
        if not self.target.rel:
            return os.fstat(self.dir_fd)
        return self.checked_entry(fsops.lstat_at(self.name, self.dir_fd))

    def checked_entry(self, info: os.stat_result | None) -> os.stat_result | None:
        """``info`` (the target's entry), unless it is a link or a special file."""
        if info is not None:
            if stat.S_ISLNK(info.st_mode):
                raise ForbiddenPathError(f"{self.target.rel!r} is a symbolic link")
            if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                raise ForbiddenPathError(f"{self.target.rel!r} is not a regular file or folder")
        return info

    def folder_fd(self) -> int | None:
        """The target opened as a folder (closed with the block), or None if it is missing."""
        if self.dir_fd is None:
            return None
        if not self.target.rel:
            return self.dir_fd
        try:
            fd = fsops.open_dir(self.name, self.dir_fd)
        except FileNotFoundError:
            return None
        self.stack.callback(os.close, fd)
        return fd

    def make_parent(self, spellings: list[str] | None = None) -> int:
        """The target's folder, creating the vault and missing folders (each fsync'd);
        ``spellings``: the names on disk to make the missing folders under."""
        if self.base_fd is None:
            self.base_fd = self.sandbox.open_root(self.target.lang, self.stack, create=True)
            self.missing = self.target.folders
        fd = self.base_fd
        assert fd is not None
        names = spellings if spellings and len(spellings) == len(self.missing) else self.missing
        for segment in names:
            child, created = fsops.make_dir(segment, fd)
            if created:
                self.created.append((fd, segment))
            self.stack.callback(os.close, child)
            fd = child
        self.base_fd, self.missing = fd, []
        return fd

    def commit(self, data: bytes, *, if_match: str | None = None, sync_folder: bool = True) -> None:
        """Write ``data`` atomically here, creating folders; undo them if the write fails.
        ``if_match`` is checked once more right before the swap (``atomic.replace_at``);
        ``sync_folder=False``: the caller fsyncs the folder (``dir_fd``) itself."""
        try:
            atomic.replace_at(
                self.make_parent(),
                self.name,
                data,
                mode=self.mode,
                keep_owner=True,
                if_match=if_match,
                sync_folder=sync_folder,
            )
        except OSError as err:
            self.rollback()
            fsops.refuse(err)
            raise
        except BaseException:
            self.rollback()
            raise

    def walk_start(self) -> int | None:
        """The target opened as the start folder of a walk; None when the vault is empty."""
        rel = self.target.rel
        info = self.lstat()
        if info is None:
            if rel:
                raise NotFoundError(f"{rel} does not exist")
            return None
        if not stat.S_ISDIR(info.st_mode):
            raise InvalidArgumentError(f"{rel} is a file, not a folder")
        fd = self.folder_fd()
        if fd is None:
            raise NotFoundError(f"{rel} does not exist")
        return fd

    def remove_empty_folder(self, own_files: frozenset[str] = OWN_SUMMARY) -> bool:
        """``rmdir`` the target folder; a folder with anything in it is refused, but for
        its own files (its summary, the indexer's own; with ``FOLDER_OWN_FILES``, as a
        ``delete`` asks, a Finder ``.DS_Store`` too): those go with the folder. Returns
        whether a summary went."""
        fd = self.folder_fd()
        if fd is None or self.dir_fd is None:
            raise NotFoundError(f"{self.target.rel} does not exist")
        found = fsops.own_files_only(fd, own_files)
        try:
            if found is None:
                raise OSError(errno.ENOTEMPTY, "not empty")
            for name in found:
                os.unlink(name, dir_fd=fd)
            os.rmdir(self.name, dir_fd=self.dir_fd)
            return OVERVIEW_FILE in found
        except OSError as err:
            fsops.refuse(err)
            raise InvalidArgumentError(f"{self.target.rel} is a folder that is not empty") from None

    def holds_only(self, own_files: frozenset[str]) -> bool:
        """Whether the target folder holds nothing but files of ``own_files`` (what
        ``remove_empty_folder`` would take): asked before recording what it takes."""
        fd = self.folder_fd()
        return fd is not None and fsops.own_files_only(fd, own_files) is not None

    def rollback(self) -> None:
        """Remove the (still empty) folders ``make_parent`` created."""
        for parent, segment in reversed(self.created):
            with suppress(OSError):
                os.rmdir(segment, dir_fd=parent)
        self.created.clear()


class Sandbox:
    """Resolves paths inside ``W/memory/languages/<lang>/vault/`` and nowhere else."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        # lang -> (its vault folder, that folder's real path, the real folder's identity)
        self._roots: dict[str, tuple[str, Path, tuple[int, int]]] = {}

    def vault_root(self, lang: str, *, create: bool = False) -> Path | None:
        """Real path of the lang's vault folder (the operator may link it); None if missing,
        ``ForbiddenPathError`` if this user may not look into it (a vault kept out is no
        empty vault: its notes are not gone).

        The real path found last is kept while the folder (links followed) and that
        real path are still one folder: a ``stat`` of each (one: the same path, where no
        link is on the way), not a ``realpath`` (an ``lstat`` a component), every call."""
        known = self._roots.get(lang)
        if known is not None and not create:
            folder_name, real, identity = known
            try:
                seen = _identity(folder_name)
                if seen == identity and (folder_name == str(real) or _identity(real) == seen):
                    return real
            except OSError:
                pass
        folder = self.workspace.vault_dir(check_lang(lang))
        self.check_case(lang)
        if create:
            try:
                fsops.make_folders(folder)
            except OSError as err:  # a file, a link to nothing, a link loop
                if err.errno in (errno.EEXIST, errno.ENOTDIR, errno.ELOOP):
                    raise ForbiddenPathError(f"the vault of {lang!r} is not a folder") from None
                raise
        else:
            try:
                if not folder.is_dir():
                    return None
            except PermissionError:  # (Python 3.11 raises it) not missing: kept out
                raise ForbiddenPathError(
                    f"the system does not let the indexer's user into the vault of {lang!r}"
                    " (permission denied); nothing was changed"
                ) from None
        real = Path(os.path.realpath(folder))
        try:
            found = os.stat(real)
        except OSError:
            found = None
        if found is None or not stat.S_ISDIR(found.st_mode):
            raise ForbiddenPathError(f"the vault of {lang!r} is not a folder")
        if known is None or known[1] != real:  # (a write's call: checked once per folder)
            self.check_own_folder(lang)
        self._roots[lang] = (str(folder), real, (found.st_dev, found.st_ino))
        return real

    def check_own_folder(self, lang: str) -> None:
        """Refuse a vault whose folder is another lang's (``Workspace.shared_vaults``:
        links to one folder), which the index and the watcher leave out: served too, its
        writes were made twice over one file, or recorded in no history."""
        owner = self.workspace.shared_vaults().get(lang)
        if owner is not None:
            raise ForbiddenPathError(
                f"the vault of {lang!r} is the folder of the vault of {owner!r} (or lies"
                f" inside or around it: links); it is not served: use {owner!r}, or give"
                f" {lang!r} a folder of its own and restart the indexer"
            )

    def check_case(self, lang: str) -> None:
        """Refuse ``lang`` spelled in another case than its vault's folder: a vault id is
        a language tag, whose case means nothing (``zh-Hans`` is ``zh-hans``); it would
        make a second vault (on a file system that ignores case: index one vault twice),
        or search an empty one."""
        check_lang(lang)
        if lang in self._roots:  # (found as spelled before: no listing at every call)
            return
        try:
            names = os.listdir(self.workspace.languages_dir)
        except OSError:
            return
        if lang in names:
            return
        twin = next((n for n in names if n.lower() == lang.lower() and n != lang), None)
        if twin is not None:
            raise InvalidLangError(
                f"the vault of this language is {twin!r} (a vault id's case means nothing:"
                f" {lang!r} names the same one); use {twin!r}"
            )

    def open_root(self, lang: str, stack: ExitStack, *, create: bool = False) -> int | None:
        """A descriptor of the real vault root (closed with ``stack``), or None if missing."""
        root = self.vault_root(lang, create=create)
        if root is None:
            return None
        try:
            fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        stack.callback(os.close, fd)
        return fd

    def resolve(
        self,
        lang: str,
        path: object,
        *,
        create_vault: bool = False,
        allow_root: bool = False,
        summary: bool = False,
    ) -> Target:
        """Check ``(lang, path)`` as strings and return the target; refuse with a VaultError.

        ``summary``: a folder's ``.overview.md`` is accepted too (reading and history)."""
        check_lang(lang)
        rel = clean_relpath(path, allow_root=allow_root, summary=summary)
        root = self.vault_root(lang, create=create_vault)
        if root is None:
            root = Path(os.path.realpath(self.workspace.vault_dir(lang)))
        dir_only = bool(rel) and names_folder(path)
        return Target(lang, rel, root / rel if rel else root, root, dir_only)

    def resolve_file(self, lang: str, path: object, *, summary: bool = False) -> Target:
        """``resolve`` for a tool that takes a file only: a folder's spelling is refused."""
        target = self.resolve(lang, path, summary=summary)
        if target.dir_only:
            raise ForbiddenPathError(NOT_A_FILE)
        return target

    @contextmanager
    def open(self, target: Target) -> Iterator[Place]:
        """Walk to the target's folder by descriptors; refuse links and special files."""
        with ExitStack() as stack:
            place = Place(target, stack, self)
            fd = _open_resolved_root(target, stack)
            if fd is None:
                yield place
                return
            folders = target.folders
            for index, segment in enumerate(folders):
                try:
                    child = fsops.open_dir(segment, fd)
                except FileNotFoundError:
                    place.missing = folders[index:]
                    break
                stack.callback(os.close, child)
                fd = child
            place.base_fd = fd
            if place.missing:
                yield place
                return
            # A link or a special file is refused before anything is done.
            found = fsops.lstat_at(target.name, fd) if target.rel else None
            if found is not None:
                place.checked_entry(found)  # (the entry under the name asked for: one lstat)
            else:
                if target.rel:
                    place.disk_name = equivalent_name(fd, target.name)
                place.lstat()
            yield place


def _identity(path: str | Path) -> tuple[int, int] | None:
    """The folder at ``path`` (links followed) as (device, inode); None if not a folder."""
    found = os.stat(path)
    return (found.st_dev, found.st_ino) if stat.S_ISDIR(found.st_mode) else None


def _open_resolved_root(target: Target, stack: ExitStack) -> int | None:
    """A descriptor of the vault root ``resolve`` found (closed with ``stack``), or None
    if it is gone: the real path is not worked out again (a dozen ``lstat`` per call)."""
    try:
        fd = os.open(target.vault_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as err:  # a file, or a link loop
        if err.errno in (errno.ENOTDIR, errno.ELOOP):
            raise ForbiddenPathError(f"the vault of {target.lang!r} is not a folder") from None
        raise
    stack.callback(os.close, fd)
    return fd
