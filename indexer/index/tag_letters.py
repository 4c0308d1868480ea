"""Tags and types compared with the letters one to their readers folded, as search
reads them (``shared.reader_folds.TAG_LETTER_FOLDS``): a Persian tag typed with the
Arabic yeh and kaf (``كتاب``, as an Arabic keyboard types it) is the Persian spelling's
(``کتاب``), and Russian ``елка`` is ``ёлка``.

Folded on both sides when a search compares them, not in the keys the index keeps
(``tag_keys``, ``type_key``): those stay as an index of this schema wrote them, so no
index is rebuilt. A query's key with no letter another folds into (every Latin tag) is
compared as before; one with such letters is a ``GLOB`` of a class for each
(``ك`` is ``[كک]``): a replace() of each letter in every tag of every note a search
matched cost 10 times the filter's plain comparison.
"""

from __future__ import annotations

from shared.reader_folds import TAG_LETTER_FOLDS

# The letters folded into each one letter (``ي``: ``ىی``), a GLOB's class each, and those
# folded into two (the Yiddish ligatures, Malayalam's chillus): replaced before it.
_ONE_OF: dict[str, str] = {}
for _letter, _folded in TAG_LETTER_FOLDS.items():
    if len(_folded) == 1:
        _ONE_OF[_folded] = _ONE_OF.get(_folded, _folded) + _letter
_LONGER = {letter: folded for letter, folded in TAG_LETTER_FOLDS.items() if len(folded) > 1}
_GLOB_SPECIAL = {"*": "[*]", "?": "[?]", "[": "[[]"}


def _glob(key: str) -> str:
    """A GLOB pattern of the keys ``key`` (folded) is the fold of."""
    return "".join(f"[{_ONE_OF[c]}]" if c in _ONE_OF else _GLOB_SPECIAL.get(c, c) for c in key)


def matches(column: str, key: str, nested: bool) -> tuple[str, list[str]]:
    """An SQL condition, with its parameters, that ``column`` (a key as the index keeps
    it) folds to ``key`` (folded), or, ``nested``, to a key below it (``project``
    finds ``project/alpha``, as Obsidian's tag search does)."""
    if not any(c in _ONE_OF for c in key) and not any(f in key for f in _LONGER.values()):
        if not nested:
            return f"{column} = ?", [key]
        # (the keys below ``key`` sort between ``key/`` and ``key0``)
        return f"({column} = ? OR ({column} > ? AND {column} < ?))", [key, key + "/", key + "0"]
    value, params = column, []
    for letter, folded in _LONGER.items():
        if folded in key:
            value = f"replace({value}, ?, ?)"
            params += [letter, folded]
    pattern = _glob(key)
    if not nested:
        return f"{value} GLOB ?", [*params, pattern]
    return f"({value} GLOB ? OR {value} GLOB ?)", [*params, pattern, *params, pattern + "/*"]
