"""Whether a question's Han characters are Japanese or Chinese, for ``han_keywords``.

The two read a run of Han characters apart: Chinese cuts it at its function words (在 at,
都 all), Japanese writes those in hiragana and keeps its kanji whole (在留資格, residence
status: not 在 at, 留資格). A question holding hiragana is Japanese (Chinese writes none);
a run holding katakana is too (``han_keywords``). A question of kanji alone is told by
the character sets each language writes: simplified Chinese writes within GB2312,
traditional within Big5, Japanese within JIS X 0208. A sign of Chinese is a character
Japanese does not write (outside JIS X 0208: 说, 們's 们, 嗎) or Chinese grammar (的, 是,
哪, 這: a traditional question holds some, a Japanese compound none). One holding a
character outside GB2312 (資, 庁, 駅: a Japanese form, or a traditional one Japanese
shares) and no sign of Chinese is Japanese when it also holds one outside Big5 (庁, 会:
no Chinese text writes both 会 and 議). Within Big5 it may be traditional Chinese without
grammar (我要交報告, 幾個人參加會議): it is, where it holds an old form Japanese writes in
its own simplified one (會 for 会, 參 for 参: ``_KYUJITAI``), 我 (I) outside the few
Japanese words spelling it (我慢, 自我, 怪我), or a Chinese function word Japanese never
writes (可以, 如果, 幾個); else Japanese (在留資格, 東京都, 就職活動).
"""

from __future__ import annotations

import re

HIRAGANA = re.compile("[\u3041-\u309f]+")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
# Particles, pronouns and question words of Chinese, simplified and traditional, that
# Japanese writes in kana, not in its compounds (not 我 of 我慢, 他 of 其他, 了 of 終了,
# 那 of 那覇).
_CHINESE_GRAMMAR = frozenset("的是吗呢吧么麼们們这這哪谁誰什怎你她它没沒裡")
# Traditional forms (in Big5 and JIS X 0208, not GB2312) that Japanese writes in its
# shinjitai since 1946: 會 会, 參 参, 國 国, 學 学, 氣 気, 點 点, 發 発, 臺 台... Not those
# still common in Japanese names (澤, 邊, 濱, 齋, 櫻, 廣, 嶽: 渡邊, 御嶽山) or words
# (藝 of 東京藝術大学, 儘 of 我儘).
_KYUJITAI = frozenset(
    "亞惡壓圍醫隱營榮驛圓鹽應歐毆價畫會壞懷繪擴殼覺學樂勸歡觀關巖顏歸氣戲犧舊據峽挾狹區驅勳徑"
    "經繼莖螢輕儉劍檢權獻縣險顯驗嚴恆號國濟劑雜參慘棧蠶贊殘絲齒兒辭濕實寫釋壽從獸縱肅處將燒稱"
    "證孃條淨疊讓釀觸寢盡圖隨數樞聲靜齊攝竊專戰淺潛纖踐錢禪雙壯爭總裝騷臟屬續墮體對帶滯臺擇單"
    "擔膽團彈斷癡遲晝蟲鑄廳聽轉傳燈當黨盜獨讀屆貳惱腦廢賣麥發髮蠻祕變辯舖寶豐沒萬滿藥譯餘與譽"
    "搖樣謠來亂覽兩獵壘勵禮隸靈齡戀爐勞樓灣點鐵繩讚攜"
)
# 我 (I) in a Japanese word (我慢 patience, 自我 self, 怪我 injury, 我々 we, 我国 our
# country, 我流, 我執, 我欲, 我儘, 無我, 忘我, 彼我, 没我, 唯我...); elsewhere the Chinese
# pronoun (我要交報告, 幫我查一下)
_JAPANESE_I = re.compile("[自彼無忘怪没唯小大物]我|我[慢々国流執欲儘等意見田利]")
_I = "我"
# Chinese function words, traditional, that Japanese writes in no compound (not 所以,
# 多少, 告訴: Japanese words too)
_CHINESE_WORDS = re.compile("可以|如果|但是|因為|請問|一下|一些|幾個|幾天|幾次|幾位|怎樣")
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
    if not not_simplified or chinese_forms:
        return False
    if outside_big5 - outside_jis:  # (no traditional text writes it: 庁, 会, 駅)
        return True
    return not _traditional_chinese(query, han)


def _traditional_chinese(query: str, han: str) -> bool:
    """Whether ``query``, its Han characters (``han``) all in Big5 and JIS X 0208, shows
    traditional Chinese: an old form Japanese writes otherwise, 我 outside a Japanese
    word, or a Chinese function word (see the module)."""
    if not _KYUJITAI.isdisjoint(han) or _CHINESE_WORDS.search(query) is not None:
        return True
    return _I in han and query.count(_I) > len(_JAPANESE_I.findall(query))


def _outside(text: str, codec: str) -> set[str]:
    """The characters of ``text`` (Han alone) that ``codec``'s set lacks, found by one
    encoding (a character at a time took 140 ms for 10 KB of distinct ones)."""
    written = text.encode(codec, "xmlcharrefreplace").decode(codec)
    return {chr(int(number)) for number in _REFERENCE.findall(written)}
