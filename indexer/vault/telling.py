"""Telling the index, then the listeners, which files a tool call changed.

A change is indexed before its call returns (read-your-writes). A call that changes
many files (a folder moved, an entry undone, the links rewritten after a move) tells
them all at once (``tell_all``): the index syncs them in one transaction and re-keys the
row of a file that only moved, where told one by one each path cost a transaction (a
wait for the index's write lock, 0.5 s while the start's first index holds it), and
each moved note its words tokenized out and in again. A failure to tell never turns a
done change into an error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger("indexer.vault")
ChangeListener = Callable[[str, str], None]


class IndexSync(Protocol):
    """The index's side of the tools' changes: a change is indexed before the call
    returns; an append may be indexed later, but before anything reads the index."""

    def note_changed(self, lang: str, relpath: str, etag: str | None = None) -> None: ...

    def notes_changed(self, changes: list[tuple[str, str, str | None]]) -> None: ...

    def note_appended(self, lang: str, relpath: str, etag: str) -> None: ...

    def tools_writing(self, keys: list[tuple[str, str]]) -> None: ...


def tell(
    index: IndexSync | None,
    listeners: list[ChangeListener],
    lang: str,
    rel: str,
    *,
    appended: str | None = None,
    left: str | None = None,
) -> None:
    """One file changed (``appended``: by an append, which left this etag; ``left``: a
    write left it)."""
    if index is not None:
        try:
            if appended is None:
                index.note_changed(lang, rel, left)
            else:
                index.note_appended(lang, rel, appended)
        except Exception:
            log.exception("the index failed to take the change of %s:%s", lang, rel)
    _listeners(listeners, [(lang, rel)])


def tell_all(
    index: IndexSync | None,
    listeners: list[ChangeListener],
    keys: list[tuple[str, str]],
    left: dict[tuple[str, str], str] | None = None,
) -> None:
    """Many files (lang, rel) changed by one call: the index takes them together
    (``left``: the etags writes left, by key, as ``tell`` takes one)."""
    left = left or {}
    if index is not None and keys:
        try:
            index.notes_changed([(lang, rel, left.get((lang, rel))) for lang, rel in keys])
        except Exception:
            log.exception("the index failed to take the changes of %d files", len(keys))
    _listeners(listeners, keys)


def writing(index: IndexSync | None, lang: str, rel: str) -> None:
    """A file a call writes now and tells later with the rest (``tell_all``): the
    watcher takes its events as the tools' own meanwhile, not as another program's."""
    if index is not None:
        try:
            index.tools_writing([(lang, rel)])
        except Exception:
            log.exception("the index failed to take the coming change of %s:%s", lang, rel)


def _listeners(listeners: list[ChangeListener], keys: list[tuple[str, str]]) -> None:
    for lang, rel in keys:
        for listener in listeners:
            try:
                listener(lang, rel)
            except Exception:
                log.exception("change listener failed for %s:%s", lang, rel)
