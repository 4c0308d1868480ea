"""What an index of an older schema holds that history may need, carried into the new one.

An older index is recreated from the vaults (``schema.open_index``). It held the last
text of every note history never recorded (notes there before the first index), and
the texts its passes kept for history (``kept_texts``). A note another program changed
or removed while no indexer ran had that text nowhere else: the reconcile of an index of
the same schema keeps it (``befores``) and history records it first (``op: baseline``),
but a recreated index had forgotten it, and the note could not be restored. So before
the file goes, those texts are read from it, and the new index keeps them.
"""

from __future__ import annotations

import os

from indexer.index.befores import Befores
from indexer.index.carried_file import Text
from indexer.sqlite_lib import sqlite3
from indexer.vault.scan import signature
from shared.langs import is_lang
from shared.workspace import Workspace


def changed_texts(old: sqlite3.Connection, workspace: Workspace, befores: Befores) -> list[Text]:
    """The texts ``old`` kept for history, and the exact texts it held of the notes
    changed or removed on disk since it indexed them (a different size, mtime or ctime,
    or none), that history lacks (``befores.wanted``, within ``befores.room``)."""
    texts: dict[tuple[str, str], bytes] = {}
    try:
        for lang, path, data in old.execute("SELECT lang, path, data FROM befores"):
            texts[(lang, path)] = bytes(data)
    except sqlite3.OperationalError:  # (an index older than the table)
        pass
    rows = old.execute(
        "SELECT lang, path, head, body, joined, hash, size, mtime_ns, ctime_ns FROM notes"
        " WHERE exact = 1"
    )
    for lang, path, head, body, joined, digest, size, mtime_ns, ctime_ns in rows:
        if (lang, path) in texts or not is_lang(lang):
            continue
        try:
            now = os.lstat(workspace.vault_dir(lang) / path)
        except OSError:
            now = None  # gone (or out of reach): its text may be all there is
        if now is not None and signature(now) == (size, mtime_ns, ctime_ns):
            continue
        data = befores.keep(lang, path, head, body, bool(joined), digest)
        if data is not None:
            texts[(lang, path)] = data
    return [(lang, path, data) for (lang, path), data in texts.items()]
