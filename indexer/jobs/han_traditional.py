"""Traditional spellings of the Chinese words ``han_keywords`` reads, so that a question
in traditional characters is cut as the same one in simplified is.

``han_keywords`` names its stop words, pronouns, measure words and the characters around
them in simplified characters. A question written in traditional ones (Taiwan, Hong
Kong) holds 們, 這, 麼, 嗎, 裡, 過 instead: none was a stop, so ``我們都去過台北`` asked
for ``們都`` and ``這個專案的負責人是誰`` for ``這個專案`` and ``誰``. Each listed word
is read in both spellings (and in the common variants: 裏 for 裡, 麽 for 麼, 甚麼 for
什麼, 妳 for 你). The table maps only the characters those lists hold, one to one: a
character two traditional ones merged into (台, 只, 干) keeps its simplified form, and the
one word needing the other (隻, a measure) is listed as written.
"""

from __future__ import annotations

from collections.abc import Iterable

_SIMPLIFIED = (
    "业丢两个为书买从们会兑关册写况删办务动区医单卖县参发变号吗园国场妈学实对将岛峡带帮应开"
    "张户报拥换摆数时显条来标样桥沟没湾点猫现着签简类紧约纪线终经给绪缴职订讨让议记许论证诉"
    "诊该说请读谁谐谓辆过还这镇门闪问间闻项领额风么几于里万岭后占听"
)
_TRADITIONAL = (
    "業丟兩個為書買從們會兌關冊寫況刪辦務動區醫單賣縣參發變號嗎園國場媽學實對將島峽帶幫應開"
    "張戶報擁換擺數時顯條來標樣橋溝沒灣點貓現著簽簡類緊約紀線終經給緒繳職訂討讓議記許論證訴"
    "診該說請讀誰諧謂輛過還這鎮門閃問間聞項領額風麼幾於裡萬嶺後佔聽"
)
_TO_TRADITIONAL = str.maketrans(_SIMPLIFIED, _TRADITIONAL)
# Variants written beside the usual traditional form (Hong Kong's 裏, Taiwan's 甚麼 and 妳)
_VARIANTS = (("裡", "裏"), ("麼", "麽"), ("什", "甚"), ("你", "妳"))


def with_traditional(words: Iterable[str]) -> list[str]:
    """``words`` (or the characters of a string), each followed by its traditional
    spellings where they differ, without duplicates."""
    out: list[str] = []
    for word in words:
        spellings = [word, word.translate(_TO_TRADITIONAL)]
        for simple, variant in _VARIANTS:
            spellings += [s.replace(simple, variant) for s in spellings if simple in s]
        out.extend(spellings)
    return list(dict.fromkeys(out))


def with_traditional_table(table: dict[str, str]) -> dict[str, frozenset[str]]:
    """``table`` (a stop character: the characters it spells a word with) with its
    keys and values in both spellings (请: 假求示教 gives 請 too)."""
    return {
        key: frozenset(with_traditional(chars))
        for stop, chars in table.items()
        for key in with_traditional(stop)
    }
