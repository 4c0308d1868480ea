"""Nouns a Japanese question writes in hiragana (おにぎり, すし, りんご), for ``han_keywords``.

A Japanese run is cut at its hiragana, which mostly spells particles and endings, so a
noun written in hiragana was lost with them: おにぎりの作り方は gave 作 and 方. Without a
dictionary, only a stretch of hiragana that reads as a noun by its place is kept: it
opens the run, or follows a particle after a word in kanji or katakana (ラーメンと
ぎょうざの店), and ends with a particle before the next such word (の, は, を... から,
まで). A stretch that follows a kanji without a particle is its ending (作り, 買える,
教えて); one that ends the run is a verb's or the question's (を読みたい, ですか). The
question and demonstrative words, formal nouns and endings of ``_GRAMMAR`` are no
keyword (どこで買える, これは何); one closing a stretch after a particle is cut off
(りんごはどこで買える: りんご). After a word, a stretch that still opens with a
particle's kana once its particle is cut is left (ではおにぎりが: では or で, はお...?).
"""

from __future__ import annotations

from indexer.jobs.han_script import HIRAGANA

_LONG_PARTICLES = ("から", "まで")
_PARTICLES = "のはがをにでともへや"
_GRAMMAR = frozenset(
    """これ それ あれ どれ ここ そこ あそこ どこ こちら そちら どちら いつ なに なん
    だれ どなた どう どの この その あの どんな こんな そんな あんな いくつ いくら
    こと もの とき ところ ため よう ほう わけ はず うち など だけ しか ほど くらい
    ぐらい です ます でした ました ない ある いる する した なる できる ください
    とても もっと すこし ちょっと まだ もう よく いつも また すぐ そして でも しかし
    だから それから ついて について""".split()
)
_MIN_KANA = 2


def kana_nouns(run: str) -> list[str]:
    """The hiragana nouns of a Japanese Han/kana ``run`` (see the module)."""
    found: list[str] = []
    for stretch in HIRAGANA.finditer(run):
        start, end = stretch.span()
        if end == len(run):
            continue  # (a verb's ending or the question's: ですか, を読みたい)
        opened: str | None = stretch.group(0)
        if start > 0:  # after a word: a particle first, else the word's ending
            opened = _without_particle(stretch.group(0), at_start=True)
        closed = None if opened is None else _without_particle(opened, at_start=False)
        if closed is None:
            continue
        text = _without_closing_grammar(closed)
        doubled = start > 0 and text[:1] in tuple(_PARTICLES)  # (では: unsure where it ends)
        if len(text) >= _MIN_KANA and text not in _GRAMMAR and not doubled:
            found.append(text)
    return found


def _without_particle(text: str, *, at_start: bool) -> str | None:
    """``text`` without the particle it opens (``at_start``) or closes with; None when
    there is none there."""
    if not text:
        return None
    for particle in _LONG_PARTICLES:
        if text.startswith(particle) if at_start else text.endswith(particle):
            return text[len(particle) :] if at_start else text[: -len(particle)]
    edge = text[0] if at_start else text[-1]
    if edge not in _PARTICLES:
        return None
    return text[1:] if at_start else text[:-1]


def _without_closing_grammar(text: str) -> str:
    """``text`` without a grammar word it closes with after a particle (りんごはどこ:
    りんご)."""
    for size in range(len(text) - 1, 1, -1):
        word = text[-size:]
        if word in _GRAMMAR and text[-size - 1] in _PARTICLES:
            return text[: -size - 1]
    return text
