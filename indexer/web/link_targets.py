"""Where a note's links point in its vault, as Obsidian resolves them.

A link is first read relative to the note's folder (Markdown's rule); a wikilink with
a folder in it is also read from the vault's root. One that names no file there is
found by its file name across the vault, as Obsidian does for ``![[shot.png]]`` or
``![](shot.png)`` kept in ``Attachments/``: the only file of that name, or of several
the one in the note's own folder, then the one with the shortest path. A wikilink
names a note without ``.md``. What the vault does not hold is marked unresolved, never
left as a URL that answers 404.

The names are looked up once per render, all together (``NameLookup``); a note holds
at most ``MAX_MARKUP_SIGNS`` brackets, and at most ``MAX_LOOKED_UP`` names are asked.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit

from indexer.vault.file_names import name_key
from indexer.web.wikilinks import is_file_name
from shared.filetypes import NOTE_SUFFIX

if TYPE_CHECKING:
    from markdown_it.token import Token

# ``lookup(lang, keys)``: key -> the vault paths of the files whose name has that key
# (``name_key``); keys it does not know may be left out.
NameLookup = Callable[[str, Collection[str]], Mapping[str, Sequence[str]]]
MAX_LOOKED_UP = 2_000  # distinct names asked for one render (more: unresolved)
_CONTROL = frozenset(map(chr, [*range(0x20), 0x7F]))


@dataclass
class _Link:
    """A link to resolve: the token, and the vault paths it may name, best first."""

    token: Token
    wiki: bool
    candidates: list[str]  # vault paths read from the note's folder or the root
    names: list[str]  # the link's path as written, for the by-name search
    known: str | None = None  # a target needing no lookup ([[#Heading]]: the note)
    fragment: str = ""  # the heading it names (``[[Note#Heading]]``, ``[x](n.md#Heading)``)


def resolve_links(
    tokens: Sequence[Token], lang: str, note_path: str, lookup: NameLookup | None
) -> None:
    """Point each wikilink and relative Markdown link or image of ``tokens`` (a parse of
    the note at ``note_path``) at the vault file it names, or mark it unresolved.
    Without a lookup, a wikilink is read relative to the note and Markdown is left as is."""
    folder = posixpath.dirname(note_path)
    links = [link for token in _inline(tokens) if (link := _link(token, note_path))]
    if not links:
        return
    found: Mapping[str, Sequence[str]] | None = None
    if lookup is not None:
        keys = _keys(links)
        found = lookup(lang, keys) if keys else {}
    for link in links:
        target = link.known or _choose(link, folder, found)
        if target is None and found is None:
            target = link.candidates[0] if link.candidates else None
        _point(link, folder, target)


def _keys(links: Sequence[_Link]) -> list[str]:
    """The name keys to ask, at most ``MAX_LOOKED_UP``: each link's first name, in the
    note's order, before the other names it may have (``shot.png.md`` for
    ``![[shot.png]]``). Cut in sorted order, the other names took half the room, and a
    note of 1,900 pictures found only the 980 whose names sorted first."""
    names = [link.names[:1] for link in links] + [link.names[1:] for link in links]
    keys = (name_key(posixpath.basename(n)) for group in names for n in group)
    return list(dict.fromkeys(keys))[:MAX_LOOKED_UP]


def _inline(tokens: Sequence[Token]) -> Iterator[Token]:
    for token in tokens:
        if token.children:
            yield from token.children


def _link(token: Token, note_path: str) -> _Link | None:
    """The link ``token`` makes to a vault file, if it makes one."""
    folder = posixpath.dirname(note_path)
    if token.type == "wikilink":
        path = token.meta["target"]
        heading = token.meta.get("heading", "")
        if not path:  # [[#Heading]]: the note itself
            return _Link(token, True, [], [], known=note_path, fragment=heading)
        if not _plain(path):
            return _Link(token, True, [], [])
        names = [path, path + NOTE_SUFFIX] if is_file_name(path) else [path + NOTE_SUFFIX, path]
        if path.lower().endswith(NOTE_SUFFIX):
            names = [path]
        candidates = [p for n in names for p in (_within(folder, n), _within("", n)) if p]
        return _Link(token, True, list(dict.fromkeys(candidates)), names, fragment=heading)
    attr = "href" if token.type == "link_open" else "src" if token.type == "image" else None
    value = token.attrGet(attr) if attr else None
    if not isinstance(value, str):
        return None
    parts = urlsplit(value.strip())
    if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
        return None  # (nh3's attribute filter judges these)
    path = unquote(parts.path)
    target = _within(folder, path) if _plain(path) else None
    if target is None:
        return None  # (a path out of the vault: the filter drops it)
    return _Link(token, False, [target], [path], fragment=unquote(parts.fragment))


def _plain(path: str) -> bool:
    return not (_CONTROL & set(path))


def _within(folder: str, path: str) -> str | None:
    """``path`` read from ``folder``, or None when it leaves the vault."""
    target = posixpath.normpath(posixpath.join(folder, path))
    if target.startswith(("../", "/")) or target in ("..", ".", ""):
        return None
    return target


def _choose(link: _Link, folder: str, found: Mapping[str, Sequence[str]] | None) -> str | None:
    """The vault path ``link`` names, when ``found`` (the lookup's answer) holds it."""
    if found is None:
        return None
    for candidate in link.candidates:  # read from the folder (or the root): as written
        same = found.get(name_key(posixpath.basename(candidate)), ())
        if candidate in same:
            return candidate
        folded = name_key(candidate)
        for path in same:
            if name_key(path) == folded:
                return path
    for name in link.names:  # by name: the path ends with what the link says
        key = name_key(_without_dots(name))
        matches = [p for p in found.get(name_key(posixpath.basename(name)), ()) if _ends(p, key)]
        if matches:
            return min(matches, key=lambda p: (posixpath.dirname(p) != folder, p.count("/"), p))
    return None


def _without_dots(name: str) -> str:
    """The link's path without its leading ``./`` and ``../`` (the name it ends with)."""
    while name.startswith(("./", "../")):
        name = name.split("/", 1)[1]
    return name


def _ends(path: str, key: str) -> bool:
    folded = name_key(path)
    return folded == key or folded.endswith("/" + key)


def _point(link: _Link, folder: str, target: str | None) -> None:
    """Write ``target`` into the token as a URL relative to the note's folder (the
    renderer's attribute filter makes it a route), or mark the token unresolved."""
    token = link.token
    href = None if target is None else quote(_relative(target, folder))
    if href is not None and link.fragment:  # (the page opens the note at that heading)
        href += "#" + quote(link.fragment, safe="")
    if link.wiki:
        token.meta["href"] = href
    elif token.type == "image":
        if href is None:
            token.type = "unresolved_image"
            token.content = "".join(c.content for c in token.children or [])
            token.meta = {"target": link.names[0]}
        else:
            token.attrSet("src", href)
    elif href is None:
        token.attrs.pop("href", None)
        token.attrSet("class", "unresolved")
    else:
        token.attrSet("href", href)


def _relative(target: str, folder: str) -> str:
    """``target`` (a vault path) from ``folder`` (``posixpath.relpath`` without the
    current directory, which a daemon's may have lost)."""
    steps = folder.split("/") if folder else []
    parts = target.split("/")
    common = 0
    while common < min(len(steps), len(parts) - 1) and steps[common] == parts[common]:
        common += 1
    return "/".join([".."] * (len(steps) - common) + parts[common:])
