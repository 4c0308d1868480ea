"""The one-time login code handed to the browser in a file only this user can read.

A browser started with the login link on its command line showed the code to every
local user (``/proc/<pid>/cmdline`` is world-readable): one polling it could redeem the
code first and hold the session. So ``indexer open`` writes a small page, 0600, into
``<state>/login/`` (0700, this user's), and opens that file: the page leads to
``/ui/login#code=...``, whose fragment reaches neither a command line nor a server log.
Each file holds a spent or expired code a minute later; the next ``open`` removes those.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import time
from html import escape
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from shared.errors import OperationalError
from shared.workspace import Workspace

FOLDER = "login"
PREFIX = "login-"
STALE_SECONDS = 120.0  # (a code lives 60 s: a file older than this holds nothing usable)


def fragment_url(link: str) -> str:
    """``.../ui/login?code=C`` as ``.../ui/login#code=C`` (the page reads the fragment)."""
    parts = urlsplit(link)
    code = parse_qs(parts.query).get("code", [""])[0]
    if not code:
        raise OperationalError(f"the indexer's login link holds no code: {link[:80]!r}")
    return parts._replace(query="", fragment=f"code={code}").geturl()


def page_text(url: str) -> str:
    """The page the browser opens: it moves on to ``url`` at once (a link if it does not)."""
    quoted = escape(url, quote=True)
    return (
        '<!doctype html>\n<meta charset="utf-8">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f'<meta http-equiv="refresh" content="0; url={quoted}">\n'
        "<title>Opening the vault page</title>\n"
        f'<p><a href="{quoted}">Open the vault page</a> (the link works once, for a minute).'
        "\n"
    )


def write_login_file(workspace: Workspace, link: str) -> Path:
    """Write the page leading to ``link``'s code; its path, for the browser to open."""
    text = page_text(fragment_url(link)).encode("utf-8")
    state = _own_folder(None, str(workspace.state_dir), create=False)
    try:
        folder = _own_folder(state, FOLDER, create=True)
    finally:
        os.close(state)
    try:
        _remove_stale(folder)
        name = f"{PREFIX}{secrets.token_hex(12)}.html"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags, 0o600, dir_fd=folder)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, text)
        finally:
            os.close(fd)
    except OSError as err:
        raise OperationalError(
            f"cannot write the login page in {workspace.state_dir / FOLDER}: "
            f"{err.strerror or err}; `indexer open --print` prints the link to paste instead"
        ) from None
    finally:
        os.close(folder)
    return workspace.state_dir / FOLDER / name


def _own_folder(parent: int | None, name: str, *, create: bool) -> int:
    """A descriptor of the folder ``name`` (in ``parent``), refused unless it is this
    user's and no link; made 0700 when open to others (another user must not list it)."""
    try:
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=parent)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags, dir_fd=parent)
    except OSError as err:
        raise OperationalError(
            f"cannot open the folder {name} for the login page: {err.strerror or err};"
            " `indexer open --print` prints the link to paste instead"
        ) from None
    info = os.fstat(fd)
    if info.st_uid != os.getuid():
        os.close(fd)
        raise OperationalError(
            f"the folder {name} belongs to user {info.st_uid}, not to you: no login page is"
            " written there (`indexer open --print` prints the link to paste instead)"
        )
    if stat.S_IMODE(info.st_mode) & 0o077 and parent is not None:
        os.fchmod(fd, 0o700)
    return fd


def _remove_stale(folder: int) -> None:
    """Remove the login pages of earlier runs (their codes are spent or expired)."""
    now = time.time()
    for name in os.listdir(folder):
        if not name.startswith(PREFIX):
            continue
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if now - info.st_mtime > STALE_SECONDS:
                os.unlink(name, dir_fd=folder)
        except FileNotFoundError:
            continue
