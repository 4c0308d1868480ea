"""Whether a question's Han characters are Japanese or Chinese, for ``han_keywords``.

The two read a run of Han characters apart: Chinese cuts it at its function words (在 at,
都 all), Japanese writes those in hiragana and keeps its kanji whole (在留資格, residence
status: not 在 at, 留資格). A question holding hiragana is Japanese (Chinese writes none);
a run holding katakana is too (``han_keywords``). A question of kanji alone is told by
the character sets each language writes: simplified Chinese writes within GB2312, Japanese
within JIS X 0208. One holding a character outside GB2312 (資, 庁, 駅: a Japanese form, or a
traditional one Japanese shares) and no sign of Chinese is Japanese. A sign of Chinese is a
character Japanese does not write (outside JIS X 0208: 说, 們's 们, 嗎) or Chinese grammar
(的, 是, 哪, 這: a traditional question holds some, a Japanese compound none). Without
grammar, a traditional Chinese phrase read as Japanese is sought whole, with its bigrams,
not cut at its stops (在臺灣工作; 我要交報告 asks for 我要 too, 報告 among them).
"""

from __future__ import annotations

import re

HIRAGANA = re.compile("[\u3041-\u309f]+")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
# Particles, pronouns and question words of Chinese, simplified and traditional, that
# Japanese writes in kana, not in its compounds (not 我 of 我慢, 他 of 其他, 了 of 終了,
# 那 of 那覇).
_CHINESE_GRAMMAR = frozenset("的是吗呢吧么麼们們这這哪谁誰什怎你她它没沒裡")
_REFERENCE = re.compile("&#([0-9]+);")


def japanese(query: str) -> bool:
    """Whether ``query`` is Japanese: it has hiragana, or its Han characters are
    kanji simplified Chinese does not write, with no sign of Chinese (see the module)."""
    if HIRAGANA.search(query) is not None:
        return True
    han = "".join(dict.fromkeys(_HAN.findall(query)))
    outside_gb = _outside(han, "gb2312")
    if not outside_gb or not _CHINESE_GRAMMAR.isdisjoint(han):
        return False
    outside_jis, outside_big5 = _outside(han, "shift_jis"), _outside(han, "big5")
    # A character in none of the three, a rare one (most of Extensions B to G: 𠀀), tells
    # nothing: not that simplified Chinese does not write it (咱们的𠀀地方 was Japanese),
    # nor that Japanese does not
    not_simplified = outside_gb - (outside_jis & outside_big5)
    chinese_forms = outside_jis - (outside_gb & outside_big5)
    return bool(not_simplified) and not chinese_forms


def _outside(text: str, codec: str) -> set[str]:
    """The characters of ``text`` (Han alone) that ``codec``'s set lacks, found by one
    encoding (a character at a time took 140 ms for 10 KB of distinct ones)."""
    written = text.encode(codec, "xmlcharrefreplace").decode(codec)
    return {chr(int(number)) for number in _REFERENCE.findall(written)}
