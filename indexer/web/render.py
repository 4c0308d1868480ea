"""Notes as HTML for the browser page: markdown-it-py renders, nh3 sanitizes.

Note text is untrusted (an LLM or a pasted web page wrote it), so the HTML that leaves
here holds no script, no event handler, no style and no link but http(s)/mailto and
the vault's own: ``nh3`` (the Rust ``ammonia`` sanitizer) rebuilds the HTML from an
allow-list, whatever markdown-it passed through. The page's Content-Security-Policy
is the second, independent layer. Links, wikilinks and embeds are resolved in the
vault (``link_targets``, ``wikilinks``): images and files to the API's raw route, other
notes to the page's own view, what the vault does not hold marked unresolved.
Frontmatter never becomes HTML: it leaves as plain JSON values for a properties table.
"""

from __future__ import annotations

import html
import math
import posixpath
import re
from datetime import date, datetime
from functools import cache
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from indexer.page_markdown import (
    MAX_MARKDOWN_NESTING,
    MAX_MARKUP_SIGNS,
    MAX_RENDERED_CHARS,
    MAX_RENDERED_LINES,
    too_deep,
    within_bounds,
)
from indexer.web.link_targets import NameLookup, resolve_links
from indexer.web.wikilinks import UNRESOLVED, wiki_parser
from shared.errors import InvalidFrontmatterError
from shared.filetypes import is_plain_text_name
from shared.frontmatter import parse_frontmatter, split_frontmatter
from shared.timestamps import format_timestamp

URL_SCHEMES = {"http", "https", "mailto"}
# Bounds on the work one view takes besides markdown-it's (``indexer.page_markdown``):
# nh3 time grows with the square of the nesting (16,000 unclosed <ul><li>, 128 KB: 11 s).
MAX_HTML_DEPTH = 200  # deeper raw HTML is shown as text (markdown-it bounds its own)
# Tags HTML closes on its own when the next one opens (the list item before, the cell),
# with whatever is open inside them: tag -> (the tags it closes, the tags that bound the
# search for one: an item of an inner list closes nothing of the outer one).
_LISTS = frozenset({"ul", "ol", "menu"})
_TABLE = frozenset({"table", "tbody", "thead", "tfoot"})
# Elements a list item's end is not looked for through (HTML's "special" ones)
_SPECIAL = frozenset(
    "address article aside blockquote details dialog fieldset figure footer form header"
    " main nav object section table td th".split()
)
# Formatting HTML opens again in each later item once its item closed it (<li><b>...):
# they stay counted as open.
_FORMATTING = frozenset("a b big code em font i nobr s small strike strong tt u".split())
_RUBY = frozenset({"rb", "rt", "rtc", "rp"})
_CLOSES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "li": (frozenset({"li"}), _LISTS | _SPECIAL),
    "dt": (frozenset({"dt", "dd"}), _SPECIAL | {"dl"}),
    "dd": (frozenset({"dt", "dd"}), _SPECIAL | {"dl"}),
    "rb": (_RUBY, frozenset({"ruby"})),
    "rtc": (_RUBY, frozenset({"ruby"})),
    "rt": (frozenset({"rb", "rt", "rp"}), frozenset({"ruby", "rtc"})),
    "rp": (frozenset({"rb", "rt", "rp"}), frozenset({"ruby", "rtc"})),
    "td": (frozenset({"td", "th"}), _TABLE | {"tr"}),
    "th": (frozenset({"td", "th"}), _TABLE | {"tr"}),
    "tr": (frozenset({"tr"}), _TABLE),
    "tbody": (frozenset({"tbody", "thead", "tfoot"}), frozenset({"table"})),
    "thead": (frozenset({"tbody", "thead", "tfoot"}), frozenset({"table"})),
    "tfoot": (frozenset({"tbody", "thead", "tfoot"}), frozenset({"table"})),
    "option": (frozenset({"option"}), frozenset({"select", "optgroup", "datalist"})),
    "optgroup": (frozenset({"optgroup"}), frozenset({"select"})),
    "p": (frozenset({"p"}), _LISTS | _TABLE | {"td", "th", "li", "dd", "div", "blockquote"}),
}
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)")
_URL_STRIPPED = "".join(map(chr, range(0x21)))  # (the URL standard's "C0 control or space")
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())


@cache
def allowed() -> tuple[set[str], dict[str, set[str]]]:
    """The tags and attributes kept: nh3's defaults, without image maps. nh3 and
    markdown-it load on the first page rendered, not at the server's start."""
    import nh3

    tags = set(nh3.ALLOWED_TAGS) - {"area", "map"}
    attributes = {
        **{tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()},
        "*": {"title"},
        "a": {"href", "hreflang", "title"},
        "img": {"src", "alt", "title", "width", "height"},
    }
    return tags, attributes


class NoteRenderer:
    """Markdown -> sanitized HTML, and frontmatter -> plain properties."""

    def __init__(self, api_prefix: str = "/api/v1", lookup: NameLookup | None = None) -> None:
        self.api_prefix = api_prefix
        self.lookup = lookup  # the vault's files by name (None: links read as written)

    def note(self, lang: str, path: str, text: str) -> dict[str, Any]:
        """``{properties, frontmatter_error, html}`` of a note's text. A plain text file
        (``.json``, ``.xml``...) has no frontmatter and is no Markdown: shown as its text
        (read as Markdown, an XML file's tags were dropped and a JSON ``*x*`` italic)."""
        if is_plain_text_name(path):
            return {"properties": {}, "frontmatter_error": None, "html": _plain(text)}
        error = None
        try:
            meta, body = parse_frontmatter(text)
        except InvalidFrontmatterError as err:
            meta, body, error = {}, _body_after_block(text), err.message
        return {
            "properties": {str(k): plain(v) for k, v in meta.items()},
            "frontmatter_error": error,
            "html": self.html(lang, path, body),
        }

    def html(self, lang: str, path: str, markdown: str) -> str:
        """Sanitized HTML of ``markdown`` found at ``path`` (links resolve from its folder)."""
        folder = posixpath.dirname(path)

        def attribute(tag: str, name: str, value: str) -> str | None:
            if name in ("href", "src"):
                return self._url(lang, folder, value, is_image=tag == "img")
            return value

        if not within_bounds(markdown):
            return (
                f"<p><em>Longer than {MAX_RENDERED_CHARS // 1024} Ki characters,"
                f" {MAX_RENDERED_LINES} lines or {MAX_MARKUP_SIGNS} marks of markup: shown"
                f" as plain text.</em></p>{_plain(markdown)}"
            )
        rendered = self._render(lang, path, markdown, raw_html=True)
        if rendered is not None and _depth(rendered) > MAX_HTML_DEPTH:
            rendered = self._render(lang, path, markdown, raw_html=False)
        if rendered is None:  # (markdown-it stops there, dropping what is deeper and the
            return (  # rest of the list)
                f"<p><em>Lists or quotes nested deeper than {MAX_MARKDOWN_NESTING // 2}"
                f" levels: shown as plain text.</em></p>{_plain(markdown)}"
            )

        import nh3

        tags, attributes = allowed()
        return nh3.clean(
            rendered,
            tags=tags,
            attributes=attributes,
            attribute_filter=attribute,
            url_schemes=URL_SCHEMES,
            link_rel="noopener noreferrer nofollow",
            strip_comments=True,
            allowed_classes={"a": {UNRESOLVED}, "span": {UNRESOLVED}},
        )

    def _render(self, lang: str, path: str, markdown: str, *, raw_html: bool) -> str | None:
        """HTML of ``markdown``, its links resolved; None when it nests as deep as
        markdown-it parses."""
        parser = wiki_parser(raw_html=raw_html)
        tokens = parser.parse(markdown)
        if too_deep(tokens):
            return None
        resolve_links(tokens, lang, path, self.lookup)
        return str(parser.renderer.render(tokens, parser.options, {}))

    def _url(self, lang: str, folder: str, value: str, *, is_image: bool) -> str | None:
        """Where a link or image points, or None to drop it. Only what a URL's parsing
        strips is stripped (C0 controls and space): a no-break space may start a name."""
        value = value.strip(_URL_STRIPPED)
        parts = urlsplit(value)
        if parts.scheme or parts.netloc:
            # Remote images would be blocked by the CSP anyway (and may track the reader).
            ok = parts.scheme.lower() in URL_SCHEMES and not is_image
            return value if ok else None
        if not parts.path:  # '#x': the page's own routes use the fragment
            return None
        if parts.path.startswith("/"):
            return None
        target = posixpath.normpath(posixpath.join(folder, unquote(parts.path)))
        if target.startswith("../") or target in ("..", "."):
            return None
        if target.endswith(".md") and not is_image:
            heading = unquote(parts.fragment).strip()  # (the page scrolls to it)
            at = f"?heading={quote(heading, safe='')}" if heading else ""
            return f"#/{lang}/note/{quote(target)}{at}"
        return f"{self.api_prefix}/{lang}/raw/{quote(target)}"


def _depth(rendered: str) -> int:
    """How deep the tags of ``rendered`` may nest, at least: as an HTML parser reads them,
    "/>" closes nothing but a void tag, an end tag closes only a tag still open (with
    those opened after it; one that matches nothing is ignored), and a list item, cell,
    row or paragraph closes the one before it."""
    open_tags: list[str] = []
    deepest = 0
    for closing, name in _TAG.findall(rendered):
        name = name.lower()
        if not closing:
            if name not in _VOID:
                _close_implied(open_tags, name)  # <li> after <li>: siblings, not nested
                open_tags.append(name)
                deepest = max(deepest, len(open_tags))
                if deepest > MAX_HTML_DEPTH:  # enough to know (and the stack stays short)
                    return deepest
        elif name in open_tags:
            _close_at(open_tags, len(open_tags) - 1 - open_tags[::-1].index(name))
    return deepest


def _close_at(open_tags: list[str], index: int) -> None:
    """Close the tag open at ``index`` and those opened inside it, but formatting (``<b>``):
    HTML opens it again after the end, in each later item."""
    open_tags[index:] = [tag for tag in open_tags[index + 1 :] if tag in _FORMATTING]


def _close_implied(open_tags: list[str], name: str) -> None:
    """Close what opening ``name`` closes in HTML: the innermost open tag it ends (with
    everything opened inside it), looked for down to the first tag that bounds it."""
    if name not in _CLOSES:
        return
    closes, bounds = _CLOSES[name]
    for index in range(len(open_tags) - 1, -1, -1):
        if open_tags[index] in closes:
            _close_at(open_tags, index)
            return
        if open_tags[index] in bounds:
            return


def _plain(text: str) -> str:
    """``text`` as it is written, in a ``<pre>`` the page lays out a line at a time in the
    direction of the line's own words (a Hebrew text file read left to right)."""
    return f'<pre class="plain-text">{html.escape(text)}</pre>'


def _body_after_block(text: str) -> str:
    """The body of a note whose frontmatter block does not parse (the block is skipped)."""
    try:
        return split_frontmatter(text.replace("\r\n", "\n").lstrip("\ufeff"))[1]
    except InvalidFrontmatterError:
        return text


def plain(value: Any) -> Any:
    """A frontmatter value as JSON (dates as ISO text, odd numbers as text)."""
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)
