"""A deterministic token estimate, and cutting text to fit one at natural boundaries.

Why an estimate: recall must promise ``tokens <= budget_tokens`` without knowing the
agent's tokenizer, and without downloading one. The estimate counts **quarter tokens**
per character, by script, and rounds the total up:

- ASCII (English, code, Markdown, spaces, newlines): 1 quarter (4 characters a token);
- other alphabets (accented Latin, Cyrillic, Greek, Arabic, Hebrew...): 2 quarters;
- Han, kana, hangul, CJK punctuation and full-width forms, Thai, Lao, Khmer, Myanmar,
  Tibetan, Georgian, Armenian, Ethiopic, the Indic scripts, emoji (those in the BMP's
  symbol blocks too) and other characters beyond the BMP: 4 quarters (a token each).

Common BPE tokenizers spend about 4 ASCII characters and at most about one CJK or Thai
character per token, so the estimate errs on the safe side for those. Quarters add up
exactly (``quarters(a + b) == quarters(a) + quarters(b)``), so a text assembled from
parts that fit their quarter budgets fits the whole budget.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from shared.graphemes import character_start

# Runs of the characters counted as one whole token (4 quarters).
_HEAVY_RUN = re.compile(
    "["
    "\u0530-\u058f"  # Armenian
    "\u0900-\u0dff"  # Indic scripts (Devanagari ... Sinhala)
    "\u0e00-\u0fff"  # Thai, Lao, Tibetan
    "\u1000-\u109f"  # Myanmar
    "\u10a0-\u10ff"  # Georgian
    "\u1200-\u139f"  # Ethiopic
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u2300-\u23ff\u2600-\u27bf\u2b00-\u2bff"  # emoji in the BMP (symbols, dingbats)
    "\u2e80-\u9fff"  # CJK radicals, punctuation, kana, Bopomofo, CJK ideographs
    "\ua960-\ua97f\uac00-\ud7ff"  # Hangul
    "\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"  # compatibility ideographs, full-width forms
    "\U00010000-\U0010ffff"  # beyond the BMP: emoji, rare ideographs
    "]+"
)
ELLIPSIS = "…"


def quarters(text: str) -> int:
    """The estimate of ``text`` in quarter tokens (exactly additive)."""
    if text.isascii():
        return len(text)
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    heavy = sum(map(len, _HEAVY_RUN.findall(text)))  # runs: far fewer objects than chars
    return len(text) + non_ascii + 2 * heavy  # ASCII 1, other 1 + 1, heavy 1 + 1 + 2


def estimate_tokens(text: str) -> int:
    """The documented estimate: quarter tokens rounded up to whole tokens."""
    return -(-quarters(text) // 4)


def cut_to(text: str, limit: int, suffix: str = ELLIPSIS) -> str:
    """The longest start of ``text`` plus ``suffix`` within ``limit`` quarters, cut after a
    space when one is near (else between characters); "" when not even a little fits."""
    room = limit - quarters(suffix)
    if room <= 0:
        return ""
    if quarters(text) <= room:
        return text
    head = text[:room]  # every character costs a quarter at least: no longer prefix fits
    low, high = 0, len(head)
    while low < high:  # the longest prefix whose cost is <= room
        mid = (low + high + 1) // 2
        if quarters(head[:mid]) <= room:
            low = mid
        else:
            high = mid - 1
    if low == 0:
        return ""
    space = text.rfind(" ", max(0, low - 40), low)
    end = space if space > low // 2 else character_start(text, low)  # sees what follows
    if end == 0:
        return ""
    return text[:end].rstrip() + suffix


def fit_paragraphs(
    paragraphs: list[list[str]],
    limit: int,
    render: Callable[[str], str],
    *,
    from_end: bool = False,
) -> tuple[list[str], bool]:
    """Rendered lines of whole paragraphs (then whole lines, then one cut line) within
    ``limit`` quarters; ``render`` turns one line into its output (with its newline).

    Paragraphs are taken in order, or from the last one backwards with ``from_end`` (the
    newest events of a day file); a paragraph that does not fit is taken line by line
    (its last lines with ``from_end``), and a line is cut at a space or character only
    when nothing else would fit. Returns the lines and whether anything was left out;
    paragraphs are separated by one rendered empty line.
    """
    order = list(reversed(paragraphs)) if from_end else paragraphs
    gap_cost = quarters(render(""))
    taken: list[list[str]] = []
    used = 0
    truncated = False
    for paragraph in order:
        gap = gap_cost if taken else 0
        room = limit - used - gap
        whole = _rendered_within(paragraph, room, render)
        if whole is not None:
            taken.append(whole[0])
            used += gap + whole[1]
            continue
        truncated = True
        partial = _fit_lines(paragraph, room, render, from_end=from_end, cut=not taken)
        if partial:
            taken.append(partial)
        break
    if from_end:
        taken.reverse()
    out: list[str] = []
    for index, lines in enumerate(taken):
        if index:
            out.append(render(""))
        out.extend(lines)
    return out, truncated


def _rendered_within(
    lines: list[str], limit: int, render: Callable[[str], str]
) -> tuple[list[str], int] | None:
    """The rendered lines and their cost if they all fit within ``limit`` quarters, else
    None: rendering stops at the first line past the limit (a paragraph of 400,000 lines
    was rendered whole to show a few; a character costs a quarter at least, so a line
    longer than the room left is not measured either)."""
    out: list[str] = []
    used = 0
    for line in lines:
        rendered = render(line)
        if used + len(rendered) > limit:
            return None
        used += quarters(rendered)
        if used > limit:
            return None
        out.append(rendered)
    return out, used


def _fit_lines(
    lines: list[str], limit: int, render: Callable[[str], str], *, from_end: bool, cut: bool
) -> list[str]:
    """Whole lines (from the start, or the end) within ``limit``; when none fits and
    ``cut`` is set, the first (or last) line cut short."""
    order = list(reversed(lines)) if from_end else lines
    out: list[str] = []
    used = 0
    for line in order:
        rendered = render(line)
        cost = quarters(rendered) if used + len(rendered) <= limit else limit + 1
        if used + cost > limit:
            if not out and cut:
                overhead = quarters(render("x")) - 1  # the line's prefix and newline
                short = cut_to(line, limit - overhead)
                if len(short) > 1 and quarters(render(short)) <= limit:
                    out.append(render(short))
            break
        out.append(rendered)
        used += cost
    if from_end:
        out.reverse()
    return out


def paragraphs_of(
    text: str, most_lines: int | None = None, *, from_end: bool = False
) -> list[list[str]]:
    """``text`` as paragraphs (runs of non-blank lines), each a list of lines; with
    ``most_lines``, only its first (or last) lines up to that many non-blank ones: what
    more than the room can show is not split (4 MB notes were, at every render)."""
    lines = text.splitlines()
    if from_end:
        lines.reverse()
    result: list[list[str]] = []
    current: list[str] = []
    count = 0
    for line in lines:
        if count == most_lines:
            break
        if line.strip():
            current.append(line.rstrip())
            count += 1
        elif current:
            result.append(current)
            current = []
    if current:
        result.append(current)
    if from_end:
        result.reverse()
        for paragraph in result:
            paragraph.reverse()
    return result
