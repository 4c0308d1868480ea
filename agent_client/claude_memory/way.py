"""Whether a folder on a path's way is a file: the SDK's ``ENOTDIR``, which the vault
refuses as ``forbidden_path`` like any other path it will not take (too deep, a hidden
name, a link out of the vault).

Asking each folder on the way took a call per level (a view 31 folders deep: 33 calls).
The folders on a path's way are folders down to some depth, then one may be a file, and
below it every path is refused; a path that is missing has no file on its way. So one
``stat`` of the deepest folder on the way that the vault takes by name (past it the
sandbox refuses before looking at the disk, by the rules in ``shared.path_names``)
answers most cases, and a refusal there is bisected: at most 1 + log2(32) calls.
"""

from __future__ import annotations

import unicodedata

from agent_client.claude_memory.paths import vault_path
from agent_client.vault import Vault
from shared.errors import ForbiddenPathError, VaultError
from shared.path_names import MAX_DEPTH, MAX_PATH_BYTES, check_char, check_segment


def named_depth(folder: str, parts: tuple[str, ...]) -> int:
    """How many of ``parts``' first names (below ``folder``) the vault takes by name: it
    refuses a longer prefix before it looks at the disk, so no file on the way is there."""
    names = folder.split("/")
    size = len(unicodedata.normalize("NFC", folder).encode("utf-8"))
    for depth, part in enumerate(parts):
        size += 1 + len(unicodedata.normalize("NFC", part).encode("utf-8"))
        if len(names) + depth + 1 > MAX_DEPTH or size > MAX_PATH_BYTES:
            return depth
        try:
            for char in part:
                check_char(char)
            check_segment(unicodedata.normalize("NFC", part))
        except ForbiddenPathError:
            return depth
    return len(parts)


async def through_file(vault: Vault, folder: str, parts: tuple[str, ...]) -> bool:
    """Whether a folder on the way to ``parts`` (below ``folder``) is a file; what the
    vault says besides an answer or a ``forbidden_path`` is raised (the caller's)."""
    low, high = 1, min(len(parts) - 1, named_depth(folder, parts))
    depth = high  # the deepest first: a folder there, or nothing, answers at once
    while low <= high:
        kind = await _kind(vault, vault_path(folder, parts[:depth]))
        if kind == "file":
            return True
        if kind == "missing":
            return False  # nothing there: nothing below it either, a file least of all
        if kind == "dir":
            low = depth + 1  # every folder above it is one
        else:
            high = depth - 1  # refused there: a file above it, or another refusal
        depth = (low + high) // 2
    return False


async def _kind(vault: Vault, path: str) -> str:
    """ "file", "dir", "missing", or "refused" (``forbidden_path``)."""
    try:
        found = await vault.stat(path)
    except VaultError as err:
        if err.code == "forbidden_path":
            return "refused"
        raise
    return str(found["type"]) if found["type"] in ("file", "dir") else "missing"
