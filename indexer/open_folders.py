"""The warning, once at start, about workspace folders other local users may write.

A workspace (or ``memory``, ``memory/languages``, a vault) another user may write lets
them replace the URL file, so that a client sends its token to their server (clients
refuse a URL file that is not the user's: ``shared.workspace``), or plant notes the
agent then recalls as its own memory. Nothing is changed here: the folders are the
user's, and a shared folder may be shared on purpose; the warning says what to run.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from pathlib import Path

from shared.workspace import Workspace, shell_word


def open_folders(workspace: Workspace) -> list[tuple[Path, str]]:
    """The folders others may write, each with who: the workspace, its memory folders,
    each vault's; and an ancestor of the workspace others may rename it in (writable,
    not sticky: in /tmp, only the owner may rename)."""
    found: list[tuple[Path, str]] = []
    root = workspace.root
    languages = workspace.languages_dir
    folders = [root, root / "memory", languages]
    try:
        for entry in sorted(os.scandir(languages), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                folders += [Path(entry.path), Path(entry.path) / "vault"]
    except OSError:
        pass
    for folder in folders:
        who = _writers(folder, sticky_safe=False)
        if who:
            found.append((folder, who))
    for ancestor in root.parents:
        who = _writers(ancestor, sticky_safe=True)
        if who:
            found.append((ancestor, who))
    return found


def warning(found: list[tuple[Path, str]]) -> str:
    """One message for all of ``found`` (empty: none), saying the command to run."""
    if not found:
        return ""
    named = "; ".join(f"{folder} (by {who})" for folder, who in found)
    paths = " ".join(shell_word(folder) for folder, _ in found)
    return (
        f"other users may write these folders: {named}. They could replace the URL file"
        " clients send their token to, or plant notes the agent recalls as its own; if"
        f" this is not meant, run `chmod go-w {paths}`"
    )


def _writers(folder: Path, *, sticky_safe: bool) -> str:
    try:
        info = os.stat(folder)
    except OSError:
        return ""
    if not stat.S_ISDIR(info.st_mode) or (sticky_safe and info.st_mode & stat.S_ISVTX):
        return ""
    if info.st_mode & stat.S_IWOTH:
        return "every user"
    if info.st_mode & stat.S_IWGRP and not _own_private_group(info.st_gid):
        return f"group {_group_name(info.st_gid)}"
    return ""


def _own_private_group(gid: int) -> bool:
    """Whether ``gid`` is this user's own group with no other member (the usual group of
    one a system makes per user, where umask 0002 makes folders group-writable)."""
    try:
        group = grp.getgrgid(gid)
        name = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return False
    return gid == os.getgid() and group.gr_name == name and set(group.gr_mem) <= {name}


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)
