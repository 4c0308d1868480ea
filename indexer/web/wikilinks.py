"""Obsidian's wikilinks and embeds for the page's parser: ``[[Note]]``, ``[[Note|alias]]``,
``[[Note#Heading]]``, ``![[image.png|300]]``, ``![[Other note]]``.

Vaults written in Obsidian link notes this way, and the page showed the brackets as
text. An inline rule of markdown-it reads them into ``wikilink`` tokens (never inside
code, which markdown-it reads before; never inside a link's text), ``link_targets``
resolves their targets in the vault, and the render rule below writes them as a link,
an image or a span marked unresolved, every value escaped (nh3 still sanitizes after).
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from indexer.page_markdown import new_parser
from indexer.vault.link_scan import WIKILINK
from shared.filetypes import TEXT_SUFFIXES

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token
    from markdown_it.utils import EnvType, OptionsDict

IMAGE_SUFFIXES = frozenset(".avif .bmp .gif .jpeg .jpg .png .svg .webp".split())
# Files Obsidian links with their suffix (a name with any other, ``[[v1.2]]``, is a note)
FILE_SUFFIXES = (
    IMAGE_SUFFIXES
    | TEXT_SUFFIXES
    | frozenset(".base .canvas .flac .m4a .mkv .mov .mp3 .mp4 .ogg .ogv .pdf .wav .webm".split())
)
_SIZE = re.compile(r"([0-9]{1,5})(?:x([0-9]{1,5}))?")
UNRESOLVED = "unresolved"  # the class of a link whose target the vault does not hold


def wikilink_rule(state: StateInline, silent: bool) -> bool:
    """``[[...]]`` or ``![[...]]`` at ``state.pos`` as one ``wikilink`` token: read as a
    move reads wikilinks to rewrite them (``link_scan.WIKILINK``), so that the links a
    move fixes are the ones the page shows."""
    src, pos = state.src, state.pos
    embed = src.startswith("![[", pos)
    if not (embed or src.startswith("[[", pos)) or state.linkLevel > 0:
        return False
    found = WIKILINK.match(src, pos + embed, state.posMax)
    if found is None or not src[found.start() + 2 : found.end() - 2].strip():
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = parse_inner(src[found.start() + 2 : found.end() - 2], embed)
        token.content = src[pos : found.end()]
    state.pos = found.end()
    return True


def parse_inner(inner: str, embed: bool) -> dict[str, Any]:
    """Target, heading and shown text of a wikilink's inside (``target#heading|alias``).
    In a table Obsidian writes the bar as ``\\|``: its backslash is not the name's."""
    target, bar, alias = inner.partition("|")
    target = target.removesuffix("\\")
    path, _, heading = target.partition("#")
    path, heading, alias = path.strip(), heading.strip(), alias.strip()
    size = _SIZE.fullmatch(alias) if embed and bar else None
    if size:
        alias = ""
    shown = alias or (f"{path} > {heading}" if path and heading else path or heading)
    return {
        "target": path,
        "embed": embed,
        "text": shown,
        "heading": heading,
        "width": size.group(1) if size else None,
        "height": size.group(2) if size else None,
        "href": None,  # (set by link_targets: a URL relative to the note's folder)
    }


def _suffix(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > name.rfind("/") else ""


def is_image_name(name: str) -> bool:
    """Whether an embed of ``name`` shows as an image (other files show as a link)."""
    return _suffix(name) in IMAGE_SUFFIXES


def is_file_name(name: str) -> bool:
    """Whether a wikilink to ``name`` names a file as is, not a note without ``.md``."""
    return _suffix(name) in FILE_SUFFIXES


def render_wikilink(
    renderer: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A wikilink as HTML: a link, an image (an embedded picture), or unresolved text."""
    meta = tokens[idx].meta
    text = html.escape(html.unescape(meta["text"]))  # (``Tom &amp; Jerry``, as Markdown reads)
    href = meta["href"]
    if href is None:
        title = html.escape(f"Not found in the vault: {meta['target']}")
        return f'<span class="{UNRESOLVED}" title="{title}">{text}</span>'
    if meta["embed"] and is_image_name(meta["target"]):
        size = "".join(
            f' {name}="{meta[name]}"' for name in ("width", "height") if meta[name] is not None
        )
        return f'<img src="{html.escape(href)}" alt="{text}"{size}>'
    return f'<a href="{html.escape(href)}">{text}</a>'


def render_unresolved_image(
    renderer: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    """A Markdown image whose file the vault does not hold: its alt text, marked."""
    token = tokens[idx]
    title = html.escape(f"Not found in the vault: {token.meta.get('target', '')}")
    text = html.escape(token.content or token.meta.get("target", ""))
    return f'<span class="{UNRESOLVED}" title="{title}">{text}</span>'


@cache
def wiki_parser(*, raw_html: bool = True) -> MarkdownIt:
    """The page's parser with wikilinks (a move's link rewriting keeps the plain one)."""
    parser = new_parser(raw_html=raw_html)
    parser.inline.ruler.before("link", "wikilink", wikilink_rule)
    parser.add_render_rule("wikilink", render_wikilink)
    parser.add_render_rule("unresolved_image", render_unresolved_image)
    return parser
