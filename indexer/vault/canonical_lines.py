"""grep reads a note as a reader does: a text saved decomposed (NFD: Korean as macOS
names and some of its programs write it, each syllable its jamo; ``e`` and U+0301 for
``é``) is the same text as its composed twin (NFC), and so is a pattern typed or pasted
either way. Search read words so already; grep matched code points, so ``김치찌개``
found nothing in a decomposed note, nor a decomposed pattern in a composed one.

The pattern is composed (``LineMatcher``) and so is each text that is not NFC already
(most are: ``indexer.canonical``, no copy); NFC keeps a text's lines (no line break composes),
so a line found in the composed text is shown as the note has it, as an edit must quote
it. The trigram table holds notes composed too (``text.fold``), so the index's
candidates hold such notes."""

from __future__ import annotations

from collections.abc import Iterator

from indexer.canonical import composed
from indexer.vault.scan import MAX_LINE_CHARS, LineMatcher, as_lines


def matching_lines(
    matcher: LineMatcher, text: str, deadline: float | None = None
) -> Iterator[tuple[int, str]]:
    """``matcher.matching_lines`` of ``text`` read composed, each line as ``text`` has it
    (a line longer than grep shows is shown composed, cut around its match)."""
    read = composed(text)
    if read is text:
        yield from matcher.matching_lines(text, deadline)
        return
    own: list[str] = []
    for number, shown in matcher.matching_lines(read, deadline):
        own = own or as_lines(text).split("\n")
        line = own[number - 1]
        yield number, line if len(line) <= MAX_LINE_CHARS else shown
