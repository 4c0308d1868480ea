"""A deterministic token estimate, and cutting text to fit one at natural boundaries.

Why an estimate: recall must promise ``tokens <= budget_tokens`` without knowing the
agent's tokenizer, and without downloading one. The estimate counts **quarter tokens**
per character, by script, and rounds the total up:

- ASCII (English, code, Markdown, spaces, newlines): 1 quarter (4 characters a token);
- other alphabets (accented Latin, Cyrillic, Greek, Arabic, Hebrew...): 2 quarters;
- Han, kana, hangul, CJK punctuation and full-width forms, Thai, Lao, Khmer, Myanmar,
  Tibetan, Georgian, Armenian, Ethiopic, the Indic scripts, emoji (those in the BMP's
  arrow, shape and symbol blocks too, and the variation selector that makes ``™️``
  or ``ℹ️`` an emoji: those count 1.5) and other characters beyond the BMP: 4
  quarters (a token each).

Common BPE tokenizers spend about 4 ASCII characters and at most about one CJK or Thai
character per token, so the estimate errs on the safe side for those. Quarters add up
exactly (``quarters(a + b) == quarters(a) + quarters(b)``), so a text assembled from
parts that fit their quarter budgets fits the whole budget.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator

from shared.body_title import SETEXT_UNDERLINE
from shared.graphemes import character_start

# Runs of the characters counted as one whole token (4 quarters).
_HEAVY_RUN = (
    "["
    "\u0530-\u058f"  # Armenian
    "\u0900-\u0dff"  # Indic scripts (Devanagari ... Sinhala)
    "\u0e00-\u0fff"  # Thai, Lao, Tibetan
    "\u1000-\u109f"  # Myanmar
    "\u10a0-\u10ff"  # Georgian
    "\u1200-\u139f"  # Ethiopic
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u2190-\u21ff\u2300-\u23ff\u25a0-\u27bf\u2900-\u297f\u2b00-\u2bff"  # BMP emoji
    "\ufe00-\ufe0f"  # variation selectors: U+FE0F makes ™ ℹ © ‼ and others emoji
    "\u2e80-\u9fff"  # CJK radicals, punctuation, kana, Bopomofo, CJK ideographs
    "\ua960-\ua97f\uac00-\ud7ff"  # Hangul
    "\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"  # compatibility ideographs, full-width forms
    "\U00010000-\U0010ffff"  # beyond the BMP: emoji, rare ideographs
    "]+"
)


@functools.cache
def heavy_runs() -> re.Pattern[str]:
    """``_HEAVY_RUN`` compiled at the first count (``re`` builds the bitmap of its 50,000
    code points in Python: 4 ms of every server start, were it compiled at import)."""
    return re.compile(_HEAVY_RUN)


# Python's line boundaries (str.splitlines; all are whitespace): "\r\n" is one
_BREAK = r"(?:\r\n|\r(?!\n)|[\n\v\f\x1c\x1d\x1e\x85\u2028\u2029])"
_LINE_ENDS = frozenset("\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029")
_INLINE_SPACE = r"[^\S\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029]"  # (\s is str.isspace)
_BREAK_RE = re.compile(_BREAK)
_SPACES = re.compile(r"\s*")
_THROUGH_LAST_BREAK = re.compile(r"(?s:.*)[\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_BLANK_LINE = re.compile(rf"{_INLINE_SPACE}*(?:{_BREAK}|\Z)")
_PARAGRAPH_END = re.compile(rf"{_BREAK}{_INLINE_SPACE}*(?:{_BREAK}|\Z)")
_SPACE = re.compile(r"\s")  # (any white space: no-break, U+3000...)
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]")
# A Markdown heading (ATX): it says what follows, and nothing when nothing does
HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_WINDOW = 1 << 14  # characters split into lines at a time
ELLIPSIS = "…"


def quarters(text: str) -> int:
    """The estimate of ``text`` in quarter tokens (exactly additive)."""
    if text.isascii():
        return len(text)
    if len(text) <= _REMEMBERED:
        return _short_quarters(text)
    return _quarters(text)


_REMEMBERED = 256  # characters: fitting a recall block counts its lines again and again


@functools.lru_cache(maxsize=4096)
def _short_quarters(text: str) -> int:
    return _quarters(text)


def _quarters(text: str) -> int:
    non_ascii = len(text) - len(text.encode("ascii", "ignore"))
    heavy = sum(map(len, heavy_runs().findall(text)))  # runs: far fewer objects than chars
    return len(text) + non_ascii + 2 * heavy  # ASCII 1, other 1 + 1, heavy 1 + 1 + 2


def estimate_tokens(text: str) -> int:
    """The documented estimate: quarter tokens rounded up to whole tokens."""
    return -(-quarters(text) // 4)


def cut_to(text: str, limit: int, suffix: str = ELLIPSIS) -> str:
    """The longest start of ``text`` plus ``suffix`` within ``limit`` quarters, cut after
    its last sentence past half of that, else at its last white space past a quarter
    (else between characters); "" when not even a little fits."""
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
    # At the end of a sentence past half of the room (a whole sentence reads better than
    # more words of the next one)...
    sentence = _last_sentence_end(text, low // 2, low)
    if sentence:
        return text[:sentence] + (" " if text[sentence - 1] in ".!?" else "") + suffix
    # ...else at the last white space that fits past a quarter of the room (a URL or
    # path is not cut inside; a line's "> " is no place), else between characters
    # (``character_start`` sees what follows).
    space = _SPACE.search(text[low::-1])  # the last one at or before ``low``
    end = low - space.start() if space is not None else 0
    if end <= low // 4:
        end = character_start(text, low)
    if end == 0:
        return ""
    return text[:end].rstrip() + suffix


def _last_sentence_end(text: str, start: int, end: int) -> int:
    """Where the last sentence ending in ``text[start:end]`` ends (after its ``.``, ``!``,
    ``?`` and a white space, or after ``。！？``), short of ``end`` (its space and the mark
    must fit); 0 when none does or a character as seen goes on there."""
    found = 0
    for match in _SENTENCE_END.finditer(text, start, end - 1):
        found = match.end()
    return found if found and character_start(text, found) == found else 0


def fit_paragraphs(
    paragraphs: list[list[str]],
    limit: int,
    render: Callable[[str], str],
    *,
    from_end: bool = False,
    min_cut: int | None = None,
    labels: re.Pattern[str] | None = None,
) -> tuple[list[str], bool]:
    """Rendered lines of whole paragraphs (then whole lines, then one cut line) within
    ``limit`` quarters; ``render`` turns one line into its output (with its newline).

    Paragraphs are taken in order, or from the last one backwards with ``from_end`` (the
    newest events of a day file); a paragraph that does not fit is taken line by line
    (its last lines with ``from_end``). A line is cut (after a sentence, at a space or
    between characters) only when no text is shown yet, or, with ``min_cut``, when at
    least that much room is left for it. A heading is no text shown: it only says what
    follows, so a heading nothing follows is left out (the note's own, or one a cut
    left dangling); so are the lines matching ``labels`` (an event's time and title).
    Returns the lines and whether anything was left out; paragraphs are
    separated by one rendered empty line.
    """
    order = list(reversed(paragraphs)) if from_end else paragraphs
    gap_cost = quarters(render(""))
    taken: list[tuple[list[str], list[str]]] = []  # (the lines, rendered)
    used = 0
    shown = False  # a line of text (not a heading) is taken
    truncated = False
    for paragraph in order:
        gap = gap_cost if taken else 0
        room = limit - used - gap
        whole = _rendered_within(paragraph, room, render)
        if whole is not None:
            taken.append((paragraph, whole[0]))
            used += gap + whole[1]
            shown = shown or _heading_lines(paragraph, labels) < len(paragraph)
            continue
        truncated = True
        cut = not shown or (min_cut is not None and room >= min_cut)
        partial = _fit_lines(paragraph, room, render, from_end=from_end, cut=cut)
        if partial:
            kept = paragraph[-len(partial) :] if from_end else paragraph[: len(partial)]
            taken.append((kept, partial))
        break
    if from_end:
        taken.reverse()
    truncated = _drop_last_headings(taken, labels) or truncated
    out: list[str] = []
    for index, (_, lines) in enumerate(taken):
        if index:
            out.append(render(""))
        out.extend(lines)
    return out, truncated


def _drop_last_headings(
    taken: list[tuple[list[str], list[str]]], labels: re.Pattern[str] | None = None
) -> bool:
    """``taken`` (in reading order) without the headings at its end; whether any was."""
    dropped = False
    while taken:
        lines, rendered = taken[-1]
        count = len(lines) - _heading_lines(lines, labels)
        if count == len(lines):
            break
        dropped = True
        if count:
            taken[-1] = (lines[:count], rendered[:count])
            break
        taken.pop()
    return dropped


def _heading_lines(lines: list[str], labels: re.Pattern[str] | None = None) -> int:
    """How many of ``lines`` at their end only say what follows: ATX headings (and lines
    matching ``labels``), or all of them when they end with a setext underline."""
    if len(lines) > 1 and SETEXT_UNDERLINE.match(lines[-1]) and not HEADING.match(lines[-2]):
        return len(lines)
    count = len(lines)
    while count and (
        HEADING.match(lines[count - 1]) or (labels and labels.match(lines[count - 1]))
    ):
        count -= 1
    return len(lines) - count


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
    more than the room can show is not split (4 MB notes were, at every render, and a
    note of blank lines was split whole to show nothing)."""
    if most_lines is None:
        return list(iter_paragraphs(text))
    if not from_end:
        return take_lines(iter_paragraphs(text, most_lines), most_lines)
    size = max(_WINDOW, 2 * most_lines)  # a line and its break: 2 characters at least
    while True:  # a longer end of the text at each turn, until it holds enough lines
        start = _line_start_after(text, len(text) - size)
        tail = list(iter_paragraphs(text[start:]))
        count = sum(map(len, tail))
        if start == 0 or count >= most_lines:
            break
        size = max(2 * size, size * most_lines // max(1, count) * 5 // 4)
    taken = take_lines((paragraph[::-1] for paragraph in reversed(tail)), most_lines)
    return [paragraph[::-1] for paragraph in reversed(taken)]


def take_lines(paragraphs: Iterable[list[str]], most_lines: int) -> list[list[str]]:
    """The first paragraphs up to ``most_lines`` lines in all (the last one cut), read no
    further than that."""
    taken: list[list[str]] = []
    left = most_lines
    for paragraph in paragraphs if left > 0 else ():
        taken.append(paragraph[:left])
        left -= len(taken[-1])
        if left <= 0:
            break
    return taken


def iter_paragraphs(text: str, most_lines: int | None = None) -> Iterator[list[str]]:
    """The paragraphs of ``text`` as ``paragraphs_of`` splits them, one at a time as they
    are asked for, each only its first ``most_lines`` lines when given: the text is split
    a window of lines at a time, no further than the paragraphs asked for (the focus of a
    recall hit is often in a note's first lines). Blank lines between windows and the
    rest of a paragraph past ``most_lines`` are skipped by regular expressions."""
    current: list[str] = []
    pos = 0
    while pos < len(text):
        if not current:
            pos = _paragraph_start(text, pos)
        elif most_lines is not None and len(current) >= most_lines:
            yield current
            current = []
            pos = _paragraph_end(text, pos)  # (only when one more paragraph is asked for)
            continue
        stop = _line_end_after(text, pos + _WINDOW)
        for line in text[pos:stop].splitlines():
            if not line.strip():
                if current:
                    yield current
                    current = []
            elif most_lines is None or len(current) < most_lines:
                current.append(line.rstrip())
        pos = stop
    if current:
        yield current


def _paragraph_start(text: str, pos: int) -> int:
    """Where the first non-blank line at or after ``pos`` (a line's start or end) starts;
    the text's end when none does."""
    spaces = _SPACES.match(text, pos)
    end = spaces.end() if spaces else pos
    if end == len(text) or end == pos or text[end - 1] in _LINE_ENDS:
        return end
    through = _THROUGH_LAST_BREAK.match(text, pos, end)  # back to its line's start
    return through.end() if through else pos


def _paragraph_end(text: str, pos: int) -> int:
    """Where the paragraph holding the line starting at ``pos`` ends (``pos`` for a blank
    line)."""
    if _BLANK_LINE.match(text, pos):
        return pos
    found = _PARAGRAPH_END.search(text, pos)
    return found.start() if found else len(text)


def _line_end_after(text: str, at: int) -> int:
    """The end of the line holding ``at``, its line break included (the text's end)."""
    if at >= len(text):
        return len(text)
    found = _BREAK_RE.search(text, at)
    return found.end() if found else len(text)


def _line_start_after(text: str, at: int) -> int:
    """Where the first line starting at or after ``at`` starts (0 for ``at`` <= 0; the
    text's end when no line does)."""
    if at <= 0:
        return 0
    if text[at - 1] in _LINE_ENDS and not (text[at - 1] == "\r" and text[at] == "\n"):
        return at
    found = _BREAK_RE.search(text, at)
    return found.end() if found else len(text)
