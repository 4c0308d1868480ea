"""Where things live in a workspace ``W`` (the SPEC's "Workspace layout"), for both processes.

The indexer writes ``indexer.mcp.url`` (and ``indexer.mcp.token`` when a token is set);
the agent client and the indexer's own commands read them with ``read_url_file`` and
``read_token_file``. Nothing here creates anything.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import shlex
import stat
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from shared.errors import ConfigError
from shared.langs import is_lang

URL_FILE = "indexer.mcp.url"
TOKEN_FILE = "indexer.mcp.token"
STATE_DIR = ".indexer"
# A folder's directory summary (SPEC "Directory summaries"): a dot-file, so that editors
# and ``find``/``grep`` leave it out of the way; written by the indexer's summaries job.
OVERVIEW_FILE = ".overview.md"
# What a folder's delete takes with it: its summary, and the view settings macOS's
# Finder leaves in every folder it shows (regenerated, nobody's data: a folder that
# held one could never be deleted through the tools).
FOLDER_OWN_FILES = frozenset({OVERVIEW_FILE, ".DS_Store"})

# Inside a vault (paths relative to the vault root).
ITEMS_DIR = "items"  # knowledge notes, merged by the Memory Writer
EVENTS_DIR = "events"  # day files, appended by plain code only
# The paragraph under a day file's title, as the agent client writes it: the same in
# every day file, so never what a summary says of one (older day files carry no
# ``description``; their abstract is their title)
DAY_FILE_PREAMBLE = "One section per event, in the order they were logged."


def day_file_order(rel: str) -> tuple[tuple[str, ...], str, int, int]:
    """A sort key that puts a day's continuations after it, in order: ``DD.md``, then
    ``DD-2.md`` ... ``DD-10.md`` (by name, ``DD-2.md`` came before ``DD.md`` and
    ``DD-10.md`` before ``DD-2.md``); a ``DD-1.md`` someone made comes right after
    ``DD.md`` (it sorted level with it, in whatever order the folder was listed). Other
    names sort by name."""
    *folders, name = rel.split("/")
    match = _DAY_PART.fullmatch(name)
    if match is None:
        return tuple(folders), name, 0, 0
    if match[2] is None:
        return tuple(folders), match[1], 1, 0
    return tuple(folders), match[1], int(match[2]), 1


_DAY_PART = re.compile(r"([0-9]{2})(?:-([1-9][0-9]{0,5}))?\.md")  # (ASCII: not ٣١.md)


def day_file(day: date) -> str:
    """The event log of ``day``: ``events/YYYY/MM/DD.md``, the year always four digits
    (``strftime("%Y")`` gives "999" for the year 999 on glibc, which the SPEC's layout,
    and any tool sorting day files by name, does not expect)."""
    return f"{EVENTS_DIR}/{day.year:04d}/{day.month:02d}/{day.day:02d}.md"


@dataclass(frozen=True)
class Workspace:
    """Paths of one workspace ``W``."""

    root: Path

    @property
    def url_file(self) -> Path:
        return self.root / URL_FILE

    @property
    def token_file(self) -> Path:
        return self.root / TOKEN_FILE

    @property
    def state_dir(self) -> Path:
        """The indexer's own state: never reachable through the tools."""
        return self.root / STATE_DIR

    @property
    def index_path(self) -> Path:
        return self.state_dir / "index.sqlite"

    @property
    def history_dir(self) -> Path:
        return self.state_dir / "history"

    @property
    def maintenance_state(self) -> Path:
        return self.state_dir / "maintenance-state.json"

    @property
    def lock_path(self) -> Path:
        """Held (flock) by whichever indexer process writes the index and history now:
        ``indexer serve``, or a command such as ``indexer reindex`` run without one."""
        return self.state_dir / "lock"

    @property
    def serving_lock_path(self) -> Path:
        """Held (flock) by ``indexer serve`` alone, while it serves: the workspace lock
        held by a command beside a crashed server's URL file is no server to trust."""
        return self.state_dir / "serving"

    @property
    def clean_mark(self) -> Path:
        """Present while no server runs and the last one stopped cleanly (start-up then
        skips the integrity checks that read whole files)."""
        return self.state_dir / "clean-shutdown"

    @property
    def languages_dir(self) -> Path:
        return self.root / "memory" / "languages"

    def vault_dir(self, lang: str) -> Path:
        """The vault folder of ``lang`` (the caller has validated ``lang``)."""
        return self.languages_dir / lang / "vault"

    def langs(self) -> list[str]:
        """Langs that have a vault folder on disk, sorted, but for those whose folder is
        another's (``shared_vaults``). A folder the system does not let this process look
        into is left out (``is_dir`` raised, and one such folder stopped the index of
        every vault)."""
        return self._vaults()[0]

    def shared_vaults(self) -> dict[str, str]:
        """lang -> the lang whose vault folder its vault is, or lies inside or around
        (links to one folder): left out of ``langs``, never served. Two vaults over one
        folder wrote each file twice (two index rows, two histories, or none: the
        watcher told the change to one lang). The first lang in sorted order keeps it."""
        return self._vaults()[1]

    def _vaults(self) -> tuple[list[str], dict[str, str]]:
        try:
            names = os.listdir(self.languages_dir)
        except OSError:
            return [], {}
        found = tuple(
            (n, folder)
            for n in sorted(names)
            if is_lang(n) and (folder := _folder_identity(self.vault_dir(n))) is not None
        )
        seen = _SEEN_VAULTS.get(self.root)
        if seen is not None and seen[0] == found:  # (the same folders: no realpath each)
            return list(seen[1]), dict(seen[2])
        kept: dict[str, str] = {}  # lang -> its vault's real path, with a trailing "/"
        shared: dict[str, str] = {}
        for lang, _ in found:
            real = os.path.join(os.path.realpath(self.vault_dir(lang)), "")
            owner = next(
                (k for k, r in kept.items() if r.startswith(real) or real.startswith(r)), None
            )
            if owner is None:
                kept[lang] = real
            else:
                shared[lang] = owner
        _SEEN_VAULTS[self.root] = (found, list(kept), dict(shared))
        return list(kept), shared


# root -> the vault folders last looked at (lang, (device, inode)), with what they made:
# the sandbox asks at each vault's first call, and a realpath of every vault each time
# made a first start over 300 vaults take 12 s (the same folders make the same answer).
_SEEN_VAULTS: dict[
    Path, tuple[tuple[tuple[str, tuple[int, int]], ...], list[str], dict[str, str]]
] = {}


def _folder_identity(path: Path) -> tuple[int, int] | None:
    """The folder ``path`` leads to (links followed), or None: not a folder, or one the
    system does not let this process look at."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return (found.st_dev, found.st_ino) if stat.S_ISDIR(found.st_mode) else None


def workspace_id(root: Path) -> str | None:
    """Which folder a workspace is, without saying where: a digest of its device and
    inode (the same through any path or link to it), or None when it cannot be read.

    A server's ``/health`` answers it, unauthenticated, so that a URL file left by a crash
    naming a port another workspace's indexer took since is not mistaken for ours."""
    try:
        st = os.stat(root)
    except OSError:
        return None
    return hashlib.sha256(f"{st.st_dev}:{st.st_ino}".encode()).hexdigest()[:16]


MAX_SMALL_FILE_BYTES = 64 * 1024  # the URL and token files hold one line


def workspace_path(text: str) -> Path:
    """The absolute folder a user named as a workspace (``~`` and ``~user`` expanded);
    ``ConfigError`` when that ``~`` names no home: pathlib's RuntimeError ("Could not
    determine home directory.") ended the command in a traceback."""
    try:
        return Path(text).expanduser().resolve()
    except RuntimeError:
        user = text.split("/", 1)[0]
        raise ConfigError(
            f"the workspace {text!r} starts with {user}, but there is no such user's home "
            "(no such user, or no HOME): name the folder by its full path"
        ) from None


def not_a_folder(root: Path) -> str | None:
    """Why ``root`` cannot be a workspace folder (it, or a folder above it, is a file), in
    words; None when it can. ``serve --workspace notes.md/w`` said "the workspace cannot
    hold a folder there (a system or virtual folder?)", naming neither file."""
    for place in (root, *root.parents):
        if not place.exists():
            continue
        if place.is_dir():
            return None
        if place == root:
            return f"the workspace {root} is a file, not a folder"
        return f"the workspace {root} cannot be a folder: {place} is a file"
    return None


def spelled_otherwise(root: Path) -> Path | None:
    """A folder beside the missing ``root`` whose name is the same text in another
    Unicode form (``é`` as one code point or as ``e`` and a combining accent: a name
    typed on one system and made on another), or None."""
    import unicodedata

    wanted = unicodedata.normalize("NFC", root.name)
    try:
        with os.scandir(root.parent) as entries:
            for entry in entries:
                same = unicodedata.normalize("NFC", entry.name) == wanted
                if same and entry.name != root.name and entry.is_dir():
                    return root.parent / entry.name
    except OSError:
        return None
    return None


def shell_word(path: Path | str) -> str:
    """``path`` as one word of a command a message tells the user to run (quoted where a
    shell would split or expand it: a workspace named ``my notes`` was ``--workspace
    /home/me/my notes``, three words once pasted)."""
    return shlex.quote(str(path))


def read_url_file(path: Path) -> str | None:
    """The URL an indexer wrote to ``path`` (stripped), or None when there is none.

    ``OSError`` other than a missing file (permissions; not a regular file, too large,
    or not one line of printable ASCII; another user's file, or one they may rewrite: its
    URL may name their server, which the client would send the token) goes up: the
    caller says what.
    """
    data = _read_small_file(path, trusted=True)
    if data is None:
        return None
    url = data.strip()
    if not url:
        return None
    if not url.isascii() or not url.decode("ascii").isprintable() or b" " in url:
        # (a second line, a space or a control character: no URL, and an HTTP client's
        # error about it went up as a traceback)
        raise OSError(errno.EINVAL, f"{path.name} does not hold one URL")
    return url.decode("ascii")


def read_token_file(path: Path) -> str | None:
    """The bearer token in ``path``, or None when no token is set; ``ConfigError`` when
    it holds anything but one token (printable ASCII, as ``indexer serve`` takes it):
    sent as a header, a second line made an error message that quoted the token."""
    data = _read_small_file(path)
    if data is None:
        return None
    token = data.strip()
    if not token:
        return None
    if not (token.isascii() and token.decode("ascii").isprintable()):
        raise ConfigError(
            f"{path} does not hold one token: printable ASCII on one line, as"
            " `indexer serve --token` takes it"
        )
    return token.decode("ascii")


def lock_held(path: Path) -> bool | None:
    """Whether a process holds the lock at ``path`` (the workspace's or its serving lock)
    now; None when that cannot be told (no lock file, or not readable by this user).
    Probed with a shared lock, taken and let go at once (the holder holds it exclusively)."""
    try:  # (non-blocking: a FIFO there held the open until some program wrote to it)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    finally:
        os.close(fd)  # (closing lets go of a lock taken)
    return False


def server_serving(workspace: Workspace) -> bool | None:
    """Whether ``indexer serve`` serves ``workspace`` now (it holds the serving lock);
    None when that cannot be told: the state folder is not this user's to look into, or
    no indexer ever ran here (a URL file written by hand). A workspace an indexer ran in
    without that file (deleted, or a FIFO, a folder, a link put there) has no server a
    client may trust: a crashed one's URL file may name a port another program took."""
    path = workspace.serving_lock_path
    try:
        info = os.lstat(path)
    except FileNotFoundError:  # (the lock file of the indexer that ran: none here, None)
        return False if os.path.lexists(workspace.lock_path) else None
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return False
    return lock_held(path)


def lock_pid(workspace: Workspace) -> str:
    """The pid the workspace lock's holder wrote ("" when none can be read)."""
    try:
        return workspace.lock_path.read_text(encoding="ascii", errors="replace").strip()[:20]
    except OSError:
        return ""


def older_server(workspace: Workspace) -> int | None:
    """The pid of an ``indexer serve`` that wrote the workspace lock but holds no serving
    lock: a version from before it, still running after an upgrade (it answers, but this
    version's clients trust a URL file only beside the serving lock). Read from /proc
    where there is one; None otherwise."""
    pid = lock_pid(workspace)
    if not pid.isdigit() or server_serving(workspace) or not lock_held(workspace.lock_path):
        return None  # (a pid left by a crash may be another program's by now)
    try:
        arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    serving = b"serve" in arguments and any(b"indexer" in a for a in arguments)
    return int(pid) if serving else None


def _read_small_file(path: Path, *, trusted: bool = False) -> bytes | None:
    """The bytes of the regular file ``path``, None when it is missing. Anything else at
    that path is an ``OSError``: a FIFO held the reader until some program wrote to it
    (and every queued entry behind it), a device such as /dev/zero never ends. With
    ``trusted``, so is a file another user owns or may write (``_untrusted``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"{path.name} is not a regular file")
        if trusted:
            _untrusted(path, info)
        chunks, size = [], 0
        while chunk := os.read(fd, MAX_SMALL_FILE_BYTES + 1 - size):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_SMALL_FILE_BYTES:
                raise OSError(errno.EFBIG, f"{path.name} is larger than 64 KiB (it holds one line)")
        return b"".join(chunks)
    finally:
        os.close(fd)


def is_summary_path(segments: list[str]) -> bool:
    """Whether the path's last name is exactly a folder's summary file (``.overview.md``)
    in a folder the summaries job keeps (never inside a ``*.assets/`` folder)."""
    return segments[-1] == OVERVIEW_FILE and not any(
        folder.endswith(".assets") for folder in segments[:-1]
    )


def _untrusted(path: Path, info: os.stat_result) -> None:
    """``OSError`` (EPERM) for a file another user owns, or may rewrite (group or other
    write): what it says may be theirs. Root's own files are trusted (root can write any)."""
    if info.st_uid not in (os.getuid(), 0):
        raise OSError(
            errno.EPERM,
            f"{path.name} belongs to user {info.st_uid}, not to you: another user may have"
            " put it there; remove it and start the indexer again (and `chmod go-w` its"
            " folder)",
        )
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise OSError(
            errno.EPERM,
            f"{path.name} is writable by other users (mode {stat.S_IMODE(info.st_mode):04o}):"
            f" run `chmod go-w {shell_word(path)}`",
        )
