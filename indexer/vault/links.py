"""Rewriting a moved note's relative image links so that they still resolve.

A note embeds its images with links relative to its own folder, usually into its own
``<name>.md.assets/`` folder: ``![a cat](cat.md.assets/cat.png)``. When the note moves
(alone, or with its folder) its images move too, and a link must then name their new
place as seen from the note's new folder. Handled: Markdown images ``![alt](dest
"title")`` (``<dest>`` too), reference definitions ``[id]: dest``, and HTML ``<img
src="dest">``; links inside fenced code blocks and inline code are text, left alone,
as are absolute URLs, ``/rooted`` and ``#anchor`` links and links leaving the vault.
A link is written back in its own style: percent-encoded if it was, in ``<...>`` if
it was or needs to be (a space), with its ``./`` if it had one.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from urllib.parse import quote, unquote

Relocate = Callable[[str], str]  # vault path of a file before the move -> after

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+).*?\1", re.DOTALL)
_IMAGE = re.compile(
    r"(!\[(?:[^\[\]\\\n]|\\.|\[[^\[\]\n]*\])*\]\(\s*)(<[^<>\n]*>|[^\s()<>]+)(?=\s|\))"
)
_REFERENCE = re.compile(r"^( {0,3}\[[^\]\n]+\]:[ \t]*)(<[^<>\n]*>|\S+)", re.MULTILINE)
_IMG_TAG = re.compile(r"(<img\b[^>]*?\bsrc\s*=\s*)(\"[^\"]*\"|'[^']*')", re.IGNORECASE)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def rewrite_links(text: str, old_path: str, new_path: str, relocate: Relocate) -> str:
    """``text`` of the note that was at ``old_path`` and is now at ``new_path``, with
    each relative image link pointing where its target is after the move."""

    def fix(dest: str) -> str:
        return _moved_link(dest, old_path, new_path, relocate)

    out: list[str] = []
    fence: str | None = None
    chunk: list[str] = []
    for line in text.splitlines(keepends=True):
        opener = _FENCE.match(line)
        if fence is None and opener:
            out.append(_rewrite_prose("".join(chunk), fix))
            chunk = []
            fence = opener.group(1)[0] * len(opener.group(1))
            out.append(line)
        elif fence is not None:
            out.append(line)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
        else:
            chunk.append(line)
    out.append(_rewrite_prose("".join(chunk), fix))
    return "".join(out)


def _rewrite_prose(text: str, fix: Callable[[str], str]) -> str:
    """Rewrite links in ``text`` (no fenced code), leaving inline code spans alone."""
    parts: list[str] = []
    last = 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(_rewrite_plain(text[last : span.start()], fix))
        parts.append(span.group(0))
        last = span.end()
    parts.append(_rewrite_plain(text[last:], fix))
    return "".join(parts)


def _rewrite_plain(text: str, fix: Callable[[str], str]) -> str:
    text = _IMAGE.sub(lambda m: m.group(1) + fix(m.group(2)), text)
    text = _REFERENCE.sub(lambda m: m.group(1) + fix(m.group(2)), text)
    return _IMG_TAG.sub(
        lambda m: m.group(1) + m.group(2)[0] + fix(m.group(2)[1:-1]) + m.group(2)[0], text
    )


def _moved_link(dest: str, old_path: str, new_path: str, relocate: Relocate) -> str:
    """``dest`` as seen from ``new_path`` (unchanged when it is not a relative link
    into the vault, or already right)."""
    angled = dest.startswith("<") and dest.endswith(">")
    raw = dest[1:-1] if angled else dest
    link, sep, fragment = raw.partition("#")
    if not link or _SCHEME.match(link) or link.startswith(("/", "\\")):
        return dest
    link, qsep, query = link.partition("?")
    encoded = "%" in link
    plain = unquote(link) if encoded else link
    target = posixpath.normpath(posixpath.join(posixpath.dirname(old_path), plain))
    if target == ".." or target.startswith("../") or target == ".":
        return dest  # leaves the vault (or is the vault itself): not ours to change
    moved = relocate(target)
    relative = posixpath.relpath(moved, posixpath.dirname(new_path) or ".")
    if plain.startswith("./") and not relative.startswith("../"):
        relative = "./" + relative
    if relative == plain:
        return dest
    written = quote(relative, safe="/!$&'()*+,;=:@~-._") if encoded else relative
    written += qsep + query + sep + fragment
    if angled or (not encoded and any(c in written for c in " ()<>")):
        return f"<{written}>"
    return written


def relocate_prefix(old_prefix: str, new_prefix: str) -> Relocate:
    """Paths below (or equal to) ``old_prefix`` move below ``new_prefix``."""

    def relocate(path: str) -> str:
        if path == old_prefix:
            return new_prefix
        if path.startswith(old_prefix + "/"):
            return new_prefix + path[len(old_prefix) :]
        return path

    return relocate


def relocate_note(old_note: str, new_note: str) -> Relocate:
    """A single note moved: itself, and its ``.assets/`` folder with it."""
    note = relocate_prefix(old_note, new_note)
    assets = relocate_prefix(old_note + ".assets", new_note + ".assets")
    return lambda path: note(path) if path == old_note else assets(path)
