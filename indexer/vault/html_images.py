"""Where the images of raw HTML are, as a browser's HTML tokenizer reads it.

A note's raw HTML (an HTML block, an inline tag) reaches the page's browser as it is
written, so its ``<img>`` sources are found the way HTML finds them: a tag's attributes
are read leniently (an unquoted value runs to white space or ``>``, whatever it holds;
the first of a repeated name counts), and what is no tag is passed over: comments,
declarations, the insides of other tags' quoted values and the text of ``<script>``,
``<style>``, ``<textarea>`` and ``<title>``. A tag the text ends inside is no tag.
Each step reads forward, once: linear time whatever the text holds.
"""

from __future__ import annotations

import re

_SPACE = "\t\n\f\r "
# What may begin a tag, a comment or a declaration ("</>" is passed over); a tag's name
_NEXT = re.compile(rf"<(?:!--|[!?]|/(?=[^>A-Za-z])|/?([A-Za-z][^{_SPACE}/>]*))")
_COMMENT_END = re.compile(r"-?>|.*?--!?>", re.DOTALL)  # (after "<!--": "<!-->" ends one)
_ATTRIBUTE = re.compile(
    rf"[{_SPACE}/]*+([^{_SPACE}/>][^{_SPACE}/=>]*+)"
    rf"""(?:[{_SPACE}]*+=[{_SPACE}]*+("[^"]*+"?|'[^']*+'?|[^{_SPACE}>]*+))?+"""
)
_TAG_END = re.compile(rf"[{_SPACE}/]*>")
_RAW_TEXT = frozenset({"script", "style", "textarea", "title"})


def img_sources(html: str) -> list[tuple[int, int, int]]:
    """(start, end) of the ``src`` value, as written (quotes included), of each
    ``<img>`` of ``html`` that has one, and where its tag starts."""
    found: list[tuple[int, int, int]] = []
    pos = 0
    while (mark := _NEXT.search(html, pos)) is not None:
        opener = mark.group()
        if opener == "<!--":
            end = _COMMENT_END.match(html, mark.end())
            pos = end.end() if end else len(html)
        elif opener in ("<!", "<?", "</"):  # a declaration or bogus comment: to the next ">"
            close = html.find(">", mark.end())
            pos = close + 1 if close >= 0 else len(html)
        else:
            name = mark.group(1).lower()
            pos, src = _read_tag(html, mark.end(), is_img=name == "img")
            if src is not None and not opener.startswith("</"):
                found.append((*src, mark.start()))
            if name in _RAW_TEXT and not opener.startswith("</"):
                pos = _raw_text_end(html, pos, name)
    return found


def _read_tag(html: str, pos: int, *, is_img: bool) -> tuple[int, tuple[int, int] | None]:
    """Where the tag whose attributes start at ``pos`` ends, and its first ``src``
    value with one (when ``is_img``); a tag the text ends inside has none."""
    src: tuple[int, int] | None = None
    seen_src = False
    while (attribute := _ATTRIBUTE.match(html, pos)) is not None:
        value = attribute.group(2)
        if value and value[0] in "'\"" and (len(value) == 1 or value[-1] != value[0]):
            return len(html), None  # (a quote the text ends inside)
        if is_img and not seen_src and attribute.group(1).lower() == "src":
            seen_src = True
            src = attribute.span(2) if value else None
        pos = attribute.end()
    end = _TAG_END.match(html, pos)
    return (end.end(), src) if end else (len(html), None)


def _raw_text_end(html: str, pos: int, name: str) -> int:
    """Where the text of a raw-text element (its contents are no tags) ends: at its
    end tag, or the text's end."""
    closing = re.compile(rf"</{name}(?=[{_SPACE}/>])", re.IGNORECASE).search(html, pos)
    return closing.start() if closing else len(html)
