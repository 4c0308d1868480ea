"""Rewriting a moved note's relative image links so that they still resolve.

A note embeds its images with links relative to its own folder, usually into its own
``<name>.md.assets/`` folder: ``![a cat](cat.md.assets/cat.png)``. When the note moves
(alone, or with its folder) its images move too, and a link must then name their new
place as seen from the note's new folder. Handled: Markdown images ``![alt](dest
"title")`` (``<dest>`` too), reference definitions ``[id]: dest``, and the ``src``
attribute of an HTML ``<img>`` tag (its attributes read as HTML reads them, not the
first ``src=`` text). Links are found where CommonMark finds them (a missed one is a
broken image after the move): a destination may hold balanced parentheses, an inline code span
needs a closing backtick string of the same length in the same paragraph (a lone
backtick is text), and links inside code spans, fenced and indented code blocks are
text, left alone, as are absolute URLs, ``/rooted`` and ``#anchor`` links and links
leaving the vault. A link is written back in its own style: percent-encoded if it was
(or if its new path holds what a URL or Markdown reads otherwise: ``%``, ``#``,
``&amp;``), with its ``./`` if it had one; a Markdown one in ``<...>`` if it was or needs
to be (a space, unbalanced parentheses), an HTML attribute with HTML's escapes (its
quote and ``&`` as entities). A link spelled in NFD names the file the vault names in
NFC; one that is rewritten is written in NFC. Links in the frontmatter's string values
are rewritten as values (``shared.frontmatter_edit``): the block stays valid YAML.
"""

from __future__ import annotations

import functools
import html
import posixpath
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from urllib.parse import quote, unquote

from shared.frontmatter_edit import edit_string_values

Relocate = Callable[[str], str]  # vault path of a file before the move -> after

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.DOTALL)
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:\s|$)")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s|$)")
_BACKTICKS = re.compile(r"`+")
_BRACKET = re.compile(r"\\.|!?\[|\]", re.DOTALL)  # (an escaped character is text)
_PARENTHESIS = re.compile(r"[()]")
_ESCAPED_PARENTHESIS = re.compile(r"(?<!\\)(?:\\\\)*\\[()]")
_LINK_OPEN = re.compile(r"\(\s*")
_ANGLED = re.compile(r"<(?:[^<>\\\n]|\\.)*>")
# In a destination: an escaped character (a pair), a parenthesis, or what ends it
_DEST_TOKEN = re.compile(r"\\\S|[()]|[\s\x00-\x1f]")
_REFERENCE = re.compile(r"^( {0,3}\[[^\]\n]+\]:[ \t]*)(<[^<>\n]*>|\S+)", re.MULTILINE)
# An <img> tag as CommonMark (the page's markdown-it) takes raw HTML for a tag: its name,
# then attributes, each white space, a name and maybe ``=`` and a value (quoted, or
# unquoted without spaces, quotes, ``=<>```), then ``/>`` or ``>``; anything else is text.
# HTML reads the attributes of such a tag the same way. Possessive: each ``<img`` is
# read once, without backtracking, and a quote ends the reading of a value that another
# ``<img`` inside it began, so a paragraph is read in linear time whatever it holds.
_HTML_SPACE = r"[ \t\n\r\f]"
_UNQUOTED_CHAR = r"""[^"'=<>`\x00-\x20]"""
_ATTRIBUTE = re.compile(
    rf"{_HTML_SPACE}++([A-Za-z_:][A-Za-z0-9_.:-]*+)"
    rf"""(?:{_HTML_SPACE}*+={_HTML_SPACE}*+("[^"]*+"|'[^']*+'|{_UNQUOTED_CHAR}++))?+"""
)
_IMG_TAG = re.compile(rf"<img(?:{_ATTRIBUTE.pattern})*+{_HTML_SPACE}*+/?>", re.IGNORECASE)
_UNQUOTED = re.compile(rf"{_UNQUOTED_CHAR}+")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

Move = Callable[[str], str | None]  # a link's URL -> its new URL, None if it stays
Edit = tuple[int, int, str]  # start, end, replacement
# What a path cannot hold as it is in a URL (an escape, a fragment, a query) or in a
# Markdown destination (a backslash escape, a character reference, the ``<`` and ``>``
# that only a ``<...>`` destination may not hold): such a path is percent-encoded.
_NOT_ITSELF = re.compile(r"[%#?\\<>]|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def rewrite_links(text: str, old_path: str, new_path: str, relocate: Relocate) -> str:
    """``text`` of the note that was at ``old_path`` and is now at ``new_path``, with
    each relative image link pointing where its target is after the move."""

    @functools.lru_cache(maxsize=4096)  # (a note may repeat one link a hundred thousand times)
    def move(url: str) -> str | None:
        return _moved_url(url, old_path, new_path, relocate)

    head, body = edit_string_values(text, lambda value: _rewrite_markdown(value, move))
    return head + _rewrite_markdown(body, move)


def _rewrite_markdown(text: str, move: Move) -> str:
    """Markdown ``text`` with the links CommonMark sees moved."""
    return "".join(
        _rewrite_block(chunk, move) if prose else chunk for chunk, prose in _blocks(text)
    )


def _blocks(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` cut into (chunk, is prose) pieces: a prose chunk is one paragraph (or
    heading), the unit inline code spans live in; code blocks and blank lines are not
    prose. Code must stay as written, so fenced blocks and indented ones (which cannot
    interrupt a paragraph, and are list content inside a list) are told apart."""
    para: list[str] = []
    fence: str | None = None
    indented = False  # inside an indented code block
    para_open = False  # the previous line continues a paragraph
    in_list = False  # 4+ spaces may then be list content, not code: leave them prose
    for line in text.splitlines(keepends=True):
        if fence is not None:
            yield line, False
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        blank = not line.strip()
        indent = _indent(line)
        if indented and (blank or indent >= 4):
            yield line, False
            continue
        indented = False
        opener = _fence_opener(line)
        heading = _HEADING.match(line) is not None
        item = _LIST_ITEM.match(line) is not None
        if not blank and indent == 0 and not para_open and not item:
            in_list = False  # back at the margin after a break: any list has ended
        if (blank or opener or heading or item) and para:
            yield "".join(para), True
            para = []
        if opener is not None:
            fence, para_open = opener, False
            yield line, False
        elif blank:
            para_open = False
            yield line, False
        elif indent >= 4 and not para_open and not in_list:
            indented = True
            yield line, False
        elif heading:
            para_open = False
            yield line, True
        else:
            in_list = in_list or item
            para.append(line)
            para_open = True
    if para:
        yield "".join(para), True


def _indent(line: str) -> int:
    """Columns of leading white space (a tab goes to the next multiple of 4)."""
    columns = 0
    for char in line:
        if char == " ":
            columns += 1
        elif char == "\t":
            columns += 4 - columns % 4
        else:
            break
    return columns


def _fence_opener(line: str) -> str | None:
    """The fence a line opens (its character repeated), or None; a backtick fence's
    info string holds no backtick, else the line is prose with a code span."""
    found = _FENCE.match(line)
    if found is None or (found.group(1)[0] == "`" and "`" in found.group(2)):
        return None
    return found.group(1)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of the inline code spans of one paragraph, as CommonMark finds them:
    a backtick string opens one only if a later string of the same length closes it
    (an unmatched one is literal text), and a backslash escapes an opening backtick."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for start, end in runs:
        by_length.setdefault(end - start, []).append(start)
    spans: list[tuple[int, int]] = []
    pos = 0
    for start, end in runs:
        if start < pos:
            continue  # inside the span found last
        if _escaped(text, start):
            start += 1  # that backtick is text; the rest of the string may still open
        if start == end:
            continue
        length = end - start
        closers = by_length.get(length, [])
        index = bisect_left(closers, end)
        if index < len(closers):
            pos = closers[index] + length
            spans.append((start, pos))
    return spans


def _escaped(text: str, index: int) -> bool:
    """Whether the character at ``index`` follows an odd number of backslashes."""
    count = 0
    while index - count > 0 and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def _rewrite_block(text: str, move: Move) -> str:
    """Rewrite the links of one paragraph, leaving those in inline code alone."""
    spans = _code_spans(text)
    ends = [e for _, e in spans]

    def in_code(start: int, end: int) -> bool:
        index = bisect_right(ends, start)  # the first span ending after ``start``
        return index < len(spans) and spans[index][0] < end

    edits: list[Edit] = []
    opens = _image_opens(text, spans)
    dest_ends = _destination_ends(text, [start for _, start in opens])
    for alt_end, start in opens:
        found = dest_ends.get(start)
        if found is not None and not in_code(alt_end, found):
            edits.append((start, found, _markdown_link(text[start:found], move)))
    for m in _REFERENCE.finditer(text):
        if not in_code(m.start(), m.end()):
            edits.append((m.start(2), m.end(2), _markdown_link(m.group(2), move)))
    for m in _IMG_TAG.finditer(text):
        src = _src_value(text, m.start() + len("<img"), m.end())
        if src is not None and not in_code(m.start(), m.end()):
            edits.append((src.start(2), src.end(2), _html_attribute(src.group(2), move)))
    return _apply(text, edits)


def _image_opens(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(its ``]``, where its destination starts) of each ``![alt](`` of one paragraph,
    brackets matched as CommonMark matches them, in one pass: a ``]`` closes the last
    ``[`` or ``![`` still open; escaped ones and those in code spans are text. (A regex
    read the alt text from each ``![`` on, to the paragraph's end: quadratic.)"""
    opens: list[tuple[int, int]] = []
    images: list[bool] = []  # the brackets open: whether each opens an image
    last = 0
    for span_start, span_end in [*spans, (len(text), len(text))]:
        for token in _BRACKET.finditer(text, last, span_start):
            if token.group() in ("[", "!["):
                images.append(token.group() == "![")
            elif token.group() == "]" and images and images.pop():
                after = _LINK_OPEN.match(text, token.end())
                if after is not None:
                    opens.append((token.start(), after.end()))
        last = span_end
    return opens


def _src_value(text: str, start: int, end: int) -> re.Match[str] | None:
    """The ``src`` attribute (with a value) among the attributes of the tag read from
    ``start`` to ``end``: the first one, as HTML keeps the first of a repeated name."""
    pos = start
    while (attribute := _ATTRIBUTE.match(text, pos, end)) is not None:
        if attribute.group(1).lower() == "src":
            return attribute if attribute.group(2) is not None else None
        pos = attribute.end()
    return None


def _markdown_link(dest: str, move: Move) -> str:
    """A Markdown destination moved: in ``<...>`` if it was or now needs to be; one that
    escaped its parentheses (``i\\(.png``) escapes them again rather than be angled."""
    angled = dest.startswith("<") and dest.endswith(">")
    moved = move(_unescaped(dest[1:-1] if angled else dest))
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
    value = written[1:-1] if quoted else written
    moved = move(html.unescape(value))
    if moved is None:
        return written
    escaped = moved.replace("&", "&amp;")
    if not quoted and _UNQUOTED.fullmatch(escaped):
        return escaped
    mark = written[0] if quoted else '"'
    return mark + escaped.replace(mark, "&quot;" if mark == '"' else "&#39;") + mark


def _destination_ends(text: str, starts: list[int]) -> dict[int, int | None]:
    """End of the link destination at each of ``starts`` (CommonMark: ``<...>``, or text
    without spaces whose unescaped parentheses balance), or None when there is none or
    it is not followed by white space or the closing ``)``. The text after all of them
    is read once: each start waits on a stack, with the parentheses' depth it began at,
    for the ``)`` that closes below it or the white space that ends every one (reading
    to that end from each start took quadratic time on ``![a](`` repeated)."""
    ends: dict[int, int | None] = {}
    plain: list[int] = []
    for start in starts:
        angled = _ANGLED.match(text, start)
        if angled:
            end = angled.end()
            ends[start] = end if end < len(text) and _ends_destination(text[end]) else None
        elif not text.startswith("<", start):
            plain.append(start)
    pending: list[tuple[int, int]] = []  # (start, depth at it): depths never decrease
    depth, index, pos = 0, 0, 0
    while pending or index < len(plain):
        if not pending:
            pos = max(pos, plain[index])
        token = _DEST_TOKEN.search(text, pos)
        if token is None:
            break  # the text ends: no destination is followed by what ends one
        at, char = token.start(), token.group()
        while index < len(plain) and plain[index] <= at:
            pending.append((plain[index], depth))
            index += 1
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            while pending and pending[-1][1] > depth:
                start = pending.pop()[0]
                ends[start] = at if at > start else None
        elif len(char) == 1:  # white space or a control character: every one ends
            for start, level in pending:
                ends[start] = at if at > start and level == depth and char.isspace() else None
            pending.clear()
        pos = token.end()
    return ends


def _ends_destination(char: str) -> bool:
    """Whether ``char`` may follow a link destination (white space, or the link's end)."""
    return char.isspace() or char == ")"


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


def _moved_url(url: str, old_path: str, new_path: str, relocate: Relocate) -> str | None:
    """``url`` as seen from ``new_path``; None when it is not a relative link into the
    vault, or already right."""
    link, sep, fragment = url.partition("#")
    if not link or _SCHEME.match(link) or link.startswith(("/", "\\")):
        return None
    link, qsep, query = link.partition("?")
    encoded = "%" in link
    plain = unquote(link) if encoded else link
    target = posixpath.normpath(posixpath.join(posixpath.dirname(old_path), plain))
    if target == ".." or target.startswith("../") or target == ".":
        return None  # leaves the vault (or is the vault itself): not ours to change
    # The vault names files in NFC; a link may be spelled in NFD (typed on a Mac).
    composed = unicodedata.normalize("NFC", target)
    moved = relocate(composed)
    if moved == composed:  # not moved: the link keeps its own spelling
        moved = target
    relative = posixpath.relpath(moved, posixpath.dirname(new_path) or ".")
    if plain.startswith("./") and not relative.startswith("../"):
        relative = "./" + relative
    if relative == plain:
        return None
    if encoded or _NOT_ITSELF.search(relative):
        relative = quote(relative, safe="/!$'()*+,;=:@~-._")  # (& may spell a reference)
    return relative + qsep + query + sep + fragment


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
