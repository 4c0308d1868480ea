"""Rewriting a moved note's relative links so that they still resolve.

A note embeds its images with links relative to its own folder, usually into its own
``<name>.md.assets/`` folder: ``![a cat](cat.md.assets/cat.png)``. When the note moves
(alone, or with its folder) its images move too, and a link must then name their new
place as seen from the note's new folder; a link to another note (``[dog](dog.md)``)
must name that note from the new folder. Handled: the links a reader sees
(``link_spans``, which reads the note as the page does): Markdown images ``![alt](dest
"title")`` and links ``[text](dest)`` (``<dest>`` too), reference definitions ``[id]:
dest``, and the ``src`` attribute of an HTML ``<img>`` tag; links in code are text,
left alone, as are absolute URLs, ``/rooted`` and ``#anchor`` links and links leaving
the vault. A link is written back in its own style: percent-encoded if it was
(or if its new path holds what a URL or Markdown reads otherwise: ``%``, ``#``,
``&amp;``), its letters of other scripts encoded only if it encoded such letters
(``猫%20图片.md`` stays readable), with its ``./`` if it had one; a Markdown one in
``<...>`` if it was or needs to be (a space, unbalanced parentheses), an HTML
attribute with HTML's escapes (its quote and ``&`` as entities). A link spelled in NFD
names the file the vault names in NFC; one that is rewritten is written in NFC. Links
in the frontmatter's string values are rewritten as values (``shared.frontmatter_edit``):
the block stays valid YAML.

Obsidian's wikilinks and embeds, ``![[cat.md.assets/cat.png|200]]``, name a file as
Obsidian resolves them: from the note's folder, else from the vault's root (``.md`` may
be left out). One whose file moves names its new place in the same way, as written (no
encoding: a name a wikilink cannot hold, ``#`` or ``|``, leaves it as it was, logged).
"""

from __future__ import annotations

import functools
import html
import logging
import posixpath
import re
import unicodedata
from collections.abc import Callable
from urllib.parse import quote, unquote

from indexer.vault.link_scan import UNQUOTED_CHAR
from indexer.vault.link_spans import link_target_spans, reading
from shared.frontmatter_edit import edit_string_values

Relocate = Callable[[str], str]  # vault path of a file before the move -> after
log = logging.getLogger(__name__)

_PARENTHESIS = re.compile(r"[()]")
_ESCAPED_PARENTHESIS = re.compile(r"(?<!\\)(?:\\\\)*\\[()]")

_UNQUOTED = re.compile(rf"{UNQUOTED_CHAR}+")
_URL_TRIMMED = "".join(map(chr, range(0x21)))  # (the URL standard's "C0 control or space")
_TABS_AND_LINE_ENDS = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

Move = Callable[[str], str | None]  # a link's URL -> its new URL, None if it stays
Moving = Callable[[str], bool]  # whether the file at this vault path is one that moves
Exists = Callable[[str], bool]  # whether there is a file or folder at this vault path
Renamed = Callable[[str], str | None]  # a name that finds nothing -> its renamed file's
Edit = tuple[int, int, str]  # start, end, replacement
# What a path cannot hold as it is in a URL (an escape, a fragment, a query) or in a
# Markdown destination (a backslash escape, a character reference, the ``<`` and ``>``
# that only a ``<...>`` destination may not hold): such a path is percent-encoded.
_ONE_LINE = re.compile(r"[^\r\n\x85\u2028\u2029]+")
_NOT_IN_WIKILINK = re.compile(r"[\[\]|#^\\\r\n]")  # (what ends a target, or no file holds)
_NOT_ITSELF = re.compile(r"[%#?\\<>|`]|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
_URL_SAFE = "/!$'()*+,;=:@~-._"  # (& may spell a reference)
# A percent-encoded byte of a non-ASCII character's UTF-8: a link written wholly encoded
_ENCODED_NON_ASCII = re.compile(r"%[89A-Fa-f][0-9A-Fa-f]")


def rewrite_links(
    text: str,
    old_path: str,
    new_path: str,
    relocate: Relocate,
    moving: Moving | None = None,
    exists: Exists | None = None,
    found: Exists | None = None,
    renamed: Renamed | None = None,
) -> str:
    """``text`` of the note that was at ``old_path`` and is now at ``new_path``, with
    each relative link pointing where its target is after the move. ``moving``
    tells the files that move (by default, those ``relocate`` moves) and ``exists``
    what is there before the move (by default, nothing): a link may name a file from
    the note's folder or from the root, and only one of them is there. ``found``
    tells whether a file elsewhere has that path as its name or its path's end (by
    default, none): a plain link naming such a file, and none from the folder or the
    root, is left as it is, as Obsidian finds it by its name; one that names nothing any
    more is given the name ``renamed`` answers (a file found by its name was renamed)."""
    moves = moving or (lambda path: relocate(path) != path)
    there = exists or (lambda path: False)

    @functools.lru_cache(maxsize=4096)  # (a note may repeat one link a hundred thousand times)
    def move(url: str) -> str | None:
        return _moved_url(url, old_path, new_path, relocate, moves, there, found, renamed)

    @functools.lru_cache(maxsize=4096)
    def move_wiki(target: str) -> str | None:
        return _moved_wikilink(target, old_path, new_path, relocate, moves, renamed=renamed)

    def rewrite(markdown: str) -> str:
        return _rewrite_markdown(markdown, move, move_wiki)

    def rewrite_value(value: str) -> str:
        """A property's value: a bare path to a moving file (``cover: cat.md.assets/
        p.png``, as Obsidian's plugins keep them) is moved, else its Markdown links."""
        if value and value == value.strip() and _ONE_LINE.fullmatch(value):
            moved = _moved_wikilink(value, old_path, new_path, relocate, moves, note_names=False)
            if moved is not None:
                return moved
        return rewrite(value)

    head, body = edit_string_values(text, rewrite_value)
    return head + rewrite(body)


def _rewrite_markdown(text: str, move: Move, move_wiki: Move) -> str:
    """Markdown ``text`` with the links a reader sees moved. A rewrite of HTML
    values or wikilinks that would change how the page reads the note (hostile HTML: a
    value holding a block's end; a new name holding a backtick) is made without them,
    else not at all (logged)."""
    edits: list[tuple[int, int, str, bool]] = []
    for start, end, kind in link_target_spans(text):
        written = text[start:end]
        if kind == "html":
            moved = _html_attribute(written, move)
        elif kind == "wiki":
            moved = _wikilink_target(written, move_wiki)
        else:
            moved = _markdown_link(written, move)
        if moved != written:
            edits.append((start, end, moved, kind != "markdown"))
    if not edits:
        return text
    rewritten = _apply(text, [edit[:3] for edit in edits])
    if not any(edit[3] for edit in edits):
        return rewritten  # (a destination is written as one again: no check needed)
    before = reading(text)
    if before is None or reading(rewritten) == before:
        return rewritten
    rewritten = _apply(text, [edit[:3] for edit in edits if not edit[3]])
    if reading(rewritten) == before:
        return rewritten
    log.warning("links left as they were: rewriting them changed how the note reads")
    return text


def _wikilink_target(written: str, move: Move) -> str:
    """A wikilink's target moved, the white space around it kept."""
    target = written.strip()
    moved = move(target) if target else None
    if moved is None:
        return written
    start = written.index(target)
    return written[:start] + moved + written[start + len(target) :]


def _markdown_link(dest: str, move: Move) -> str:
    """A Markdown destination moved: in ``<...>`` if it was or now needs to be; one that
    escaped its parentheses (``i\\(.png``) escapes them again rather than be angled."""
    angled = dest.startswith("<") and dest.endswith(">")
    # The URL the page reads: markdown-it reads a NUL as U+FFFD and trims the URL's
    # white space (``mdurl``, any Unicode white space).
    url = _unescaped(dest[1:-1] if angled else dest).replace("\0", "\ufffd").strip()
    moved = move(url)
    if moved is None:
        return dest
    if angled or not _needs_angles(moved):
        return f"<{moved}>" if angled else moved
    if _ESCAPED_PARENTHESIS.search(dest) and not _needs_angles(_PARENTHESIS.sub("", moved)):
        return _PARENTHESIS.sub(r"\\\g<0>", moved)
    return f"<{moved}>"


def _unescaped(dest: str) -> str:
    """The URL a Markdown destination spells: its backslash escapes and entity and
    numeric character references decoded, as CommonMark (and the page) read it
    (``a\\&b``, ``a&amp;b`` are ``a&b``), with markdown-it's own decoder."""
    if "\\" not in dest and "&" not in dest:
        return dest
    from markdown_it.common.utils import unescapeAll  # (loaded only when needed)

    return unescapeAll(dest)


def _html_attribute(written: str, move: Move) -> str:
    """An HTML attribute value (quoted or not) moved: read with HTML's character
    references and written with its quote and ``&`` as references (Markdown's ``<...>``
    means nothing there, and would be part of the URL); an unquoted one stays unquoted
    when it can."""
    quoted = written[:1] in ("'", '"')
    value = html.unescape(written[1:-1] if quoted else written).replace("\0", "\ufffd")
    # The URL a browser reads: without leading and trailing controls and spaces, and
    # without tabs and line ends anywhere (the URL standard).
    moved = move(_TABS_AND_LINE_ENDS.sub("", value.strip(_URL_TRIMMED)))
    if moved is None:
        return written
    escaped = moved.replace("&", "&amp;")
    if not quoted and _UNQUOTED.fullmatch(escaped):
        return escaped
    mark = written[0] if quoted else '"'
    return mark + escaped.replace(mark, "&quot;" if mark == '"' else "&#39;") + mark


def _apply(text: str, edits: list[Edit]) -> str:
    """``text`` with each edit made (an edit overlapping an earlier one is dropped)."""
    parts: list[str] = []
    last = 0
    for start, end, replacement in sorted(edits):
        if start < last:
            continue
        parts += [text[last:start], replacement]
        last = end
    parts.append(text[last:])
    return "".join(parts)


def _moved_url(
    url: str,
    old_path: str,
    new_path: str,
    relocate: Relocate,
    moving: Moving,
    exists: Exists,
    found: Exists | None = None,
    renamed: Renamed | None = None,
) -> str | None:
    """``url`` as seen from ``new_path``; None when it is not a relative link into the
    vault, or already right. A link names a file from the note's folder; one that names
    none from there but a file from the vault's root (Obsidian's "absolute path in
    vault") is read from the root: left as it is, or given its file's new path."""
    link, sep, fragment = url.partition("#")
    if not link or _SCHEME.match(link) or link.startswith(("/", "\\")):
        return None
    link, qsep, query = link.partition("?")
    if not link:
        return None  # a query alone (``?q=1``): this page's, as an anchor is
    encoded = "%" in link
    plain = unquote(link) if encoded else link
    target = posixpath.normpath(posixpath.join(posixpath.dirname(old_path), plain))
    if target == ".." or target.startswith("../") or target == ".":
        return None  # leaves the vault (or is the vault itself): not ours to change
    # The vault names files in NFC; a link may be spelled in NFD (typed on a Mac).
    composed = unicodedata.normalize("NFC", target)
    rooted = unicodedata.normalize("NFC", posixpath.normpath(plain))
    same_folder = posixpath.dirname(old_path) == posixpath.dirname(new_path)
    if not moving(composed) and not plain.startswith(("./", "../")) and rooted != ".":
        if moving(rooted):
            return _written_url(relocate(rooted), plain, link) + qsep + query + sep + fragment
        if exists(rooted) and not exists(composed):
            return None
        if not exists(composed) and not exists(rooted):
            # Names no file from the folder nor from the root: one found by its name or
            # the end of its path, as Obsidian finds it (its "shortest path" links:
            # ``![](shot.png)`` for ``Attachments/shot.png``), wherever the note is.
            new_name = None if renamed is None else renamed(rooted)
            if new_name is not None:  # (a file the move renamed, which the name found)
                return _written_url(new_name, plain, link) + qsep + query + sep + fragment
            if same_folder or (found is not None and found(rooted)):
                return None  # (rewritten, it would name a path where nothing is)
    if not moving(composed) and same_folder:
        return None  # (neither the file it names nor its note's folder moves)
    moved = relocate(composed)
    if moved == composed:  # not moved: the link keeps its own spelling
        moved = target
    relative = posixpath.relpath(moved, posixpath.dirname(new_path) or ".")
    if plain.startswith("./") and not relative.startswith("../"):
        relative = "./" + relative
    if plain.endswith("/") and not relative.endswith("/"):
        relative += "/"  # (a folder's link, as written)
    if relative == plain:
        return None
    return _written_url(relative, plain, link) + qsep + query + sep + fragment


def _written_url(path: str, plain: str, link: str) -> str:
    """A link's new ``path`` as a URL, percent-encoded if the link was (``plain`` and
    ``link``: what it read, and how it was written) or the path needs it. Letters of
    other scripts stay as they are unless the link encoded such letters: Obsidian
    writes ``猫%20图片.md`` (only the space encoded), and a move must not turn a
    person's readable links into ``%E7%8C%AB...``."""
    if path == plain:
        return plain
    # Encoded too when it starts or ends with white space (a name `` cat.md``): a
    # reader trims a URL's white space, and would look for ``cat.md.assets/``.
    if "%" in link or _NOT_ITSELF.search(path) or path != path.strip():
        if _ENCODED_NON_ASCII.search(link):
            return quote(path, safe=_URL_SAFE)
        return readable_quote(path)
    return path


def readable_quote(path: str) -> str:
    """``path`` percent-encoded as a person writes it in a link of their own script (as
    Obsidian does): what a URL reads otherwise encoded (``%20``, ``%23``), letters kept."""
    return "".join(ch if _shown_as_itself(ch) else quote(ch, safe=_URL_SAFE) for ch in path)


def _shown_as_itself(character: str) -> bool:
    """Whether a character may stay unencoded in a URL written in a person's own
    script: a visible non-ASCII one (not white space, a control, a format character or
    a separator, which a reader may trim, drop or show as nothing), or a joiner that is
    part of a word (Persian ``می‌خواهم``, Devanagari ``क्‍ष``, the emoji ``👨‍💻``: the vault
    names no file with a joiner that joins nothing)."""
    if character in _JOINERS:
        return True
    return (
        not character.isascii()
        and not character.isspace()
        and unicodedata.category(character)[0] not in "CZ"
    )


_JOINERS = frozenset("\u200c\u200d")  # ZERO WIDTH NON-JOINER and JOINER


def _moved_wikilink(
    target: str,
    old_path: str,
    new_path: str,
    relocate: Relocate,
    moving: Moving,
    *,
    note_names: bool = True,
    renamed: Renamed | None = None,
) -> str | None:
    """A wikilink's ``target`` as it names its file from ``new_path``; None when it
    names it already. Obsidian reads a target from the note's folder (only so with
    ``./`` or ``../``, which then name any file from there), else from the vault's
    root, and a note's without its ``.md`` (unless not ``note_names``: a property's bare
    path names a file as it is, and ``title: cat`` is no link); the link keeps its way
    of naming."""
    if _SCHEME.match(target):
        return None
    explicit = target.startswith(("./", "../"))
    here, there = posixpath.dirname(old_path), posixpath.dirname(new_path)
    candidates = [(True, posixpath.join(here, target))]
    if not explicit:
        candidates.append((False, target.lstrip("/")))
    for relative, joined in candidates:
        path = unicodedata.normalize("NFC", posixpath.normpath(joined))
        if path in (".", "..") or path.startswith("../"):
            continue
        names = (path, path + ".md") if note_names else (path,)
        file = next((name for name in names if moving(name)), None)
        if file is None and relative and explicit:
            file = path  # a file that stays, named from the note's folder, which moves
        elif file is None:
            continue
        moved = relocate(file)
        moved = moved if file == path else moved.removesuffix(".md")
        new = moved if not relative else posixpath.relpath(moved, there or ".")
        if relative and target.startswith("./") and not new.startswith("../"):
            new = "./" + new
        elif relative and not explicit and new.startswith("../"):
            new = moved  # (read from the root: a bare ``../`` is read from the folder)
        elif not relative and target.startswith("/"):
            new = "/" + new
        return _wikilink_or_none(new, target)
    if renamed is not None and not explicit and note_names:
        return _renamed_wikilink(target, renamed)
    return None


def _renamed_wikilink(target: str, renamed: Renamed) -> str | None:
    """A wikilink that found its file by name (``[[cat]]``, ``[[b/cat]]``) and finds
    nothing after a move renamed the file: the name ``renamed`` gives it."""
    path = unicodedata.normalize("NFC", posixpath.normpath(target.lstrip("/")))
    if path in (".", "..") or path.startswith("../"):
        return None
    for name in (path + ".md", path):
        new = renamed(name)
        if new is not None:
            new = new.removesuffix(".md") if name != path else new
            return _wikilink_or_none("/" + new if target.startswith("/") else new, target)
    return None


def _wikilink_or_none(new: str, target: str) -> str | None:
    """``new``, the target a wikilink is given, unless it is ``target`` already or a
    name a wikilink cannot hold."""
    if new == target:
        return None
    if _NOT_IN_WIKILINK.search(new):
        log.warning("a wikilink to %s left as it was: its new name cannot be one", new)
        return None
    return new


def _needs_angles(dest: str) -> bool:
    """Whether ``dest`` can only be written in ``<...>``: it holds white space, ``<`` or
    ``>``, or unescaped parentheses that do not balance."""
    if any(c.isspace() or c in "<>" for c in dest):
        return True
    depth, index = 0, 0
    while index < len(dest):
        if dest[index] == "\\":
            index += 1
        elif dest[index] == "(":
            depth += 1
        elif dest[index] == ")":
            depth -= 1
            if depth < 0:
                return True
        index += 1
    return depth != 0


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
