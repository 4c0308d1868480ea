"""How the vault records its changes in history: who, why, and the two phases.

Every changing method of ``Vault`` builds ``Change`` objects (bytes before and after)
and runs the file operation inside ``Recorder.changing``: the rows are committed as
pending before the file changes, made final after, and dropped if the change fails
(see ``history.store``). Without a history store (benchmark floors, some tests) the
recorder does nothing.

Actors: ``tool`` for MCP and REST calls, ``external`` for what the watcher and the
start-up reconcile saw (and for texts found unrecorded before a change), ``job:<name>``
for background jobs writing through the vault (summaries, maintenance). The tools never
expose ``actor``; a job passes it as a keyword.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from indexer.vault.history.rows import UNDO_REASON, Seen
from indexer.vault.history.store import Change, Held, HistoryStore, Pending, Version
from indexer.vault.refused_files import RefusedFiles
from shared.errors import MAX_WHOLE_NUMBER, InvalidArgumentError, NotFoundError
from shared.invisible import SHOW_NOTHING, hides_in_line
from shared.utf8 import check_text

GoneModeOf = Callable[[str, str], tuple[str, int, int] | None]  # (hash, mode, gid)

MAX_REASON_CHARS = 500
ACTOR_RE = re.compile(r"^(tool|external|job:[a-z0-9][a-z0-9_.-]{0,63})$")

__all__ = [
    "UNDO_REASON",
    "Batch",
    "Change",
    "Recorder",
    "check_actor",
    "check_reason",
    "check_version",
]


def check_reason(reason: object) -> str | None:
    """A change's optional reason: text of at most 500 characters, no control characters
    and none that hide or reorder it (one line, shown as is in history), not undo's own;
    '' counts as none."""
    if reason is None or reason == "":
        return None
    if not isinstance(reason, str):
        raise InvalidArgumentError("reason must be a string")
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidArgumentError(
            f"reason is {len(reason)} characters long; at most {MAX_REASON_CHARS} are kept"
        )
    if reason.startswith(UNDO_REASON):  # undo tells its own versions by it
        raise InvalidArgumentError(
            f"a reason starting with {UNDO_REASON!r} is kept for the versions undo writes"
        )
    check_text("reason", reason)  # (it was "the control or invisible character U+D800")
    for char in reason:
        if hides_in_line(char):
            raise InvalidArgumentError(
                f"reason contains the control or invisible character U+{ord(char):04X}"
                " (it would hide or reorder what history shows); use one plain line"
            )
    if reason.strip() and not any(_shown(char) for char in reason):
        raise InvalidArgumentError(
            "reason shows nothing (only marks of direction, fillers or other invisible"
            " characters: history would list it blank); give words, or no reason"
        )
    return reason


def _shown(char: str) -> bool:
    """Whether a reason's character shows something (a direction mark, a soft hyphen, a
    Hangul filler, a tag character: nothing)."""
    return char.isprintable() and not char.isspace() and char not in SHOW_NOTHING


def check_actor(actor: str) -> str:
    """``tool``, ``external`` or ``job:<name>`` (a programming error otherwise)."""
    if not isinstance(actor, str) or not ACTOR_RE.fullmatch(actor):
        raise ValueError(f"actor must be 'tool', 'external' or 'job:<name>', not {actor!r}")
    return actor


def check_version(version: object, name: str = "version") -> int:
    """A version number as ``history`` lists them: a whole number ≥ 1."""
    if (
        isinstance(version, int)
        and not isinstance(version, bool)
        and 1 <= version <= MAX_WHOLE_NUMBER
    ):
        return version
    raise InvalidArgumentError(f"{name} must be a version number from history (1, 2, ...)")


class Batch:
    """Changes to many files recorded pending together (``Recorder.begin_many``), then
    each made final on its own as its file changes (``done``); ``drop_rest`` forgets
    the rows of those whose file never changed. Why: an undo of a folder move of
    10,000 notes recorded each file in a transaction of its own (13 s, most of it
    there). Crash-safe as one change is: every row is pending before its file changes,
    and ``recover`` settles each row against its file."""

    def __init__(self, store: HistoryStore | None, changes: list[Change], pending: Pending) -> None:
        self._store = store
        self._ids = {
            (c.lang, c.path): row_id for c, row_id in zip(changes, pending.ids, strict=True)
        }
        self._versions = pending.versions

    def done(self, lang: str, path: str) -> int | None:
        """The change of ``path`` is made: its row is final (marked so as ``commit``
        does); its version, None when it has no row (no history, or no change)."""
        row_id = self._ids.pop((lang, path), None)
        if row_id is not None and self._store is not None:
            self._store.commit(Pending([row_id]))
        return self._versions.get((lang, path))

    def drop_rest(self) -> None:
        """Forget the rows of the changes not ``done`` (one transaction)."""
        ids, self._ids = list(self._ids.values()), {}
        if ids and self._store is not None:
            self._store.abort(Pending(ids))


class Recorder:
    """The vault's side of history: records changes, answers with versions."""

    def __init__(self, store: HistoryStore | None, clock: Callable[[], datetime]) -> None:
        self.store = store
        self.clock = clock
        # ``held(lang, path)``: the text the index holds for a file (None: none exact).
        self.held: Held | None = None
        # ``gone_mode(lang, path)``: (hash, mode, gid) of the index's row of a file another
        # program removed, as the index removes it (``indexer.index.gone_modes``).
        self.gone_mode: GoneModeOf = lambda lang, path: None
        self.refused = RefusedFiles()  # (files history cannot store: not read again)

    @property
    def enabled(self) -> bool:
        return self.store is not None

    @contextmanager
    def changing(
        self, changes: list[Change], *, actor: str, reason: str | None
    ) -> Iterator[Pending | None]:
        """Record ``changes`` around the block that makes them (call with the files'
        locks held); a failing block leaves no version behind."""
        store = self.store
        if store is None or not changes:
            yield None
            return
        pending = store.begin(changes, actor=actor, reason=reason, at=self.clock(), held=self.held)
        try:
            yield pending
        except BaseException:
            store.abort(pending)
            raise
        store.commit(pending)

    def begin_many(self, changes: list[Change], *, actor: str, reason: str | None) -> Batch:
        """Record ``changes`` (each to a different file) as pending rows in one
        transaction, each then made final or dropped on its own (``Batch``); call with
        the files' locks held, and ``drop_rest`` once their changes are made or failed."""
        store = self.store
        if store is None or not changes:
            return Batch(None, [], Pending())
        if len({(c.lang, c.path) for c in changes}) != len(changes):
            raise ValueError("a batch records one change per file")
        pending = store.begin(changes, actor=actor, reason=reason, at=self.clock(), held=self.held)
        return Batch(store, changes, pending)

    def settle(self) -> None:
        """Mark the changes done so far as final (``HistoryStore.settle``)."""
        if self.store is not None:
            self.store.settle()

    def observe(
        self,
        lang: str,
        path: str,
        data: bytes | None,
        *,
        unknown: bool,
        kept: bool = False,
        moved_from: str | None = None,
        moved_to: str | None = None,
    ) -> None:
        """A change seen outside the tools (call with the file's lock held); ``kept``:
        the text such a change replaced, as the index kept it; ``moved_from``/``moved_to``:
        where a pass found this new file renamed from, this deletion renamed to
        (``HistoryStore.observe``)."""
        if self.store is not None:
            self.store.observe(
                lang,
                path,
                data,
                self.clock(),
                unknown=unknown,
                kept=kept,
                moved_from=moved_from,
                moved_to=moved_to,
            )

    def observe_many(self, seen: list[Seen]) -> int:
        """``observe`` of many files in one transaction (call with their locks held);
        how many rows it recorded (``HistoryStore.observe_many``)."""
        return 0 if self.store is None else self.store.observe_many(seen, self.clock())

    def need(self) -> HistoryStore:
        """The store, or ``not_found`` when this vault keeps no history."""
        if self.store is None:
            raise NotFoundError("history is not available in this indexer (feature absent)")
        return self.store

    def version(self, lang: str, path: str, number: object, name: str = "version") -> Version:
        """Version ``number`` of ``path``; ``not_found`` if history has no such version."""
        checked = check_version(number, name)
        found = self.need().get(lang, path, checked)
        if found is None:
            raise NotFoundError(f"{path} has no version {checked} (see its history)")
        return found

    def last_bytes(self, lang: str, path: str) -> bytes | None:
        """The bytes of the newest version of ``path``; None when history has none, or
        its newest says the file was deleted."""
        if self.store is None:
            return None
        latest = self.store.latest(lang, path)
        return None if latest is None else self.content(latest)

    def content(self, version: Version) -> bytes | None:
        """The bytes of ``version``; None when it records that the file did not exist."""
        if version.blob is None:
            return None
        return self.need().content(version)
