"""Keywords of a Chinese or Japanese run (Han, kana), for ``keywords``.

Without a dictionary, a Chinese question is cut at stop characters: function and
question words (的, 了, 吗, 我们, 什么, 哪里, 几点), and the grammar characters that also
spell content words (都 all / 首都 capital, 在 at / 现在 now, 要 will / 重要 important, 就
then / 就业 employment). Each remaining piece of two or more characters is a keyword with
its bigrams (the index's own unit, so a partial match still ranks), a Han character alone
one of its own unless it is mostly grammar. Such a stop character is a keyword with the
character alone beside it where it may spell a word there (``_across_stops``), and a
short list of common words holding one (``_WORDS``) is read before cutting, where the
rules around it read it wrong (both words where two overlap: 变成都市). Some stops spell
words only with a few characters (要求 and 纪要, 和平, 请假, 目的): elsewhere they are
grammar (下周要交的报告, 猫和狗). A stop opening the question starts the longer piece after
it where it may (和平公园, 请假流程, 都江堰); 现在 after a word is "now" (公司现在的情况), a
measure word after 这, 那 or a number grammar (那本书: 书; not in a name: 五台山), and so
are a verb of one character after 要 (我要交报告: 报告) and what is said of a noun after
最 or 很 (哪本书最好: 书). Each list is written in simplified characters and read in
traditional ones too (``han_traditional``: 我們都去過台北 as 我们都去过台北). A Japanese
question writes its grammar in hiragana and its loanwords in katakana (a run holding
either is Japanese: 在留カード更新), and its kanji in characters simplified Chinese does
not write (在留資格: ``han_script``): it is cut at its kana only, and its kanji are
content (東京都, 都市計画, 就職活動).
"""

from __future__ import annotations

import itertools
import re

from indexer.index.text import run_units
from indexer.jobs.han_script import HIRAGANA
from indexer.jobs.han_traditional import with_traditional, with_traditional_table
from indexer.jobs.kana_nouns import kana_nouns
from shared.graphemes import unmarked

# Chinese function words and question words (longest first when cutting). Single
# characters only when they are nearly always function words (有, 不, 地... also start
# content words, so they stay). Question words of "which", "what time", "how long";
# pronouns (大家 everyone, 自己 oneself); adverbs of doubt (也许, 或许: maybe); 在于 (lies
# in), 正在 (is doing).
_STOP_ZH_WORDS = with_traditional(
    """我们 你们 他们 她们 它们 咱们 大家 自己 什么 怎么 怎样 如何 为什么 哪些
    哪个 哪天 哪家 哪种 哪位 哪年 哪次 几点 几号 几天 几个 几次 多久 这个 那个 这些 那些
    关于 有关 还有 或者 以及 但是 因为 所以 如果 就是 还是 是否 已经 一下 一些 可以 应该
    没有 记得 告诉 请问 帮我 一个 哪里 哪儿 什么时候 什么样 这样 那样 多少 怎么样 怎么办 这里
    那里 这儿 那儿 也许 或许 在于 正在 的 了 吗 呢 吧 啊 呀 么 我 你 他 她 它 们 这 那 也 都 就
    把 被 请 和 与 及 或 是 在 要 谁 哪""".split()
)
# A verb placing something, then 在 (at): the question asks where, and its word is the
# thing placed (我的书放在哪儿了: 书, not 书放). Not 存在 (exist, and save at).
_PUT_AT = with_traditional(
    "放在 住在 停在 留在 写在 记在 挂在 坐在 站在 躺在 藏在 丢在 忘在 落在 摆在".split()
)
_STOP_ZH = _STOP_ZH_WORDS + _PUT_AT
# Common words holding a stop character that the rules below read wrong: the stop opens
# a clause (都市, 就业, 在线: read as the adverb or the preposition), or follows a longer
# piece (去过成都, 从首都出发). Each is its stop with the character alone beside it,
# paired first, whatever its place. Only words no common word overlaps: not 京都 (東京都
# holds it: 東京都庁 is 東京 and 都庁), 现在 (出现在哪里), 请假 (申请假期).
_WORDS = frozenset(with_traditional("成都 首都 都市 就业 在线".split()))
_CUTS = re.compile(
    "|".join(re.escape(w) for w in sorted([*_STOP_ZH, *_WORDS], key=len, reverse=True))
)
_WORDS_AT = re.compile("|".join(sorted(_WORDS)))
# A city, county, district or province after a name of ``_WORDS``: its word (成都市).
_PLACE_SUFFIXES = frozenset(with_traditional("市县区省"))
# Each overlap is one more reading of the whole chunk: a question holds one or two (a
# chunk repeating one, 成都市成都市..., was read once per overlap: 10 s for 10 KB).
_MOST_OVERLAPS = 4
# Stop characters that also spell content words with the character beside them (首都 and
# 都市, 现在, 和平, 成就, 申请, 重要; Japanese 京都, 和食): such a pair is a keyword too.
# The others (particles, pronouns) only between two characters that are alone (目的地);
# 是 (is) in no word at all (会议要求是什么: not 求是).
_STOP_IN_WORDS = frozenset(with_traditional("都在和就请把被与及或也要"))
_IS = "是"
# Adverbs: with no word before them (a question's start, after a pronoun), they modify
# the verb after them (都去哪里了, 我们都吃了什么), a word only when asked alone (都市).
_ADVERBS = frozenset("都也就")
# 把 and 被 after a pronoun or a noun mark the noun after them (我把书放在哪里了, 妈妈把
# 书: 书, not 把书; 他被骗了); elsewhere they may start one (我的被子, 如何把握).
_BEFORE_NOUNS = frozenset("把被")
_PRONOUNS = frozenset(
    with_traditional("我 你 他 她 它 我们 你们 他们 她们 它们 咱们 大家 自己 这 那 谁".split())
)
# 都 (all) comes before its verb: closing a clause (its end, or before a final particle),
# it ends a name (成都, 東京都, 想去京都: 京都).
_ALL = "都"
_FINALS = frozenset(with_traditional("吗呢吧啊呀的"))
# 要 (will, want) after a word; opening a chunk, the start of one (要件定義, 要求是什么).
_OPENS_WORDS = frozenset("要")
# 请 is "please" only where a clause starts: after any character it ends its word, a
# long piece's last one too (签证申请需要: 申请, not the piece 签证申 alone).
_ENDS_AFTER_ANY = frozenset(with_traditional("请"))
# Stops that spell a word only after these characters (``_ONLY_AFTER``) or before them
# (``_ONLY_BEFORE``); beside any other, grammar. 要 (will) ends a word after 纪 (纪要
# minutes), 概要, 摘要, 重要, 主要, 需要, 必要: a long piece gives its last one up to it
# (会议纪要: 会议 and 纪要, not the piece 会议纪 alone); it starts 要求, 要点, 要素, 要件
# (下周要交的报告, 书要还了吗: no word). 的 ends 目的 (purpose; 旅行的: no word); 被 ends none
# after its noun (书被偷了: 书, the book was stolen). 和 starts 和平, 和谐, 和解 (和客户:
# with the client), 请 starts 请假, 请求, 请示, 请教 (请帮: please help), 及 及时, 及格;
# 把 starts 把握, 把关 (把文件: the file), 被 被子, 被告, 被动 (被偷的钱包: stolen); 在
# 在家, 在职, 在校, 在乎 (在北京, 在意大利: at), the adverbs 就 就诊, 就职, 就餐, 就近 (就去:
# then go) and 也 也门 (Yemen; 也去: also go), wherever they are (我要就诊, 医院就诊流程).
_ONLY_AFTER = with_traditional_table({"要": "纪概摘重主需必简提首次紧扼", "的": "目", "被": ""})
_ONLY_BEFORE = with_traditional_table(
    {
        "要": "求点素件闻领紧害务",
        "和": "平谐解睦约服尚弦",
        "请": "假求示教柬帖",
        "及": "时格早",
        "把": "握关柄手",
        "被": "子告单动迫",
        "在": "家职校读乎逃册",
        "就": "诊职餐读近医绪",
        "也": "门",
    }
)
# 和, 与, 及, 或 before a content word join two (猫和狗: cat and dog, not 猫和); at a
# clause's end, after one character, they end a word (总和是多少, 温和的人).
_CONJUNCTIONS = frozenset(with_traditional("和与及或"))
# An adverb opening the question starts a word before a noun's next words (都江堰在哪里,
# 都江堰的门票, 都江堰), not before a verb's (都讨论了什么: 了).
_NOUN_NEXT = ("", "的", "在", "是", "哪")
# 在 before a place (书在哪里, where is the book) is the verb "be at", not 现在's end;
# after 存 (save), "at" (照片存在哪里: 照片 and 存, not 照片存).
_AT = "在"
_PLACES = tuple(with_traditional(("哪", "这里", "那里", "这儿", "那儿")))
_SAVE = "存"
# 有 (have) ending a piece before a question word is the verb (公司有什么规定: 公司, not
# 公司有), unless it ends a word there (所有, 拥有, 具有).
_HAVE = "有"
_ASKING = tuple(with_traditional(("什么", "多少", "哪", "几", "谁")))
_ENDING_IN_HAVE = frozenset(
    with_traditional(
        "所有 拥有 具有 含有 享有 持有 占有 富有 只有 特有 共有 私有 国有 固有".split()
    )
)
# 现在 (now) after a longer piece is the time word, not the piece's end (公司现在的情况:
# 公司, 报告现在在哪里: 报告), unless the piece ends in a word ending in 现, where 在 is
# "at" (出现在哪里, 体现在哪些方面), or 在 comes before a place.
_NOW = frozenset(with_traditional("现"))
_ENDING_IN_NOW = frozenset(
    with_traditional(
        """出现 发现 实现 表现 体现 呈现 展现 显现 涌现 浮现 再现 重现 复现 兑现 提现 变现
        闪现""".split()
    )
)
# A measure word after 这, 那, 哪 or a number (那本书, 三张照片, 这次会议) is grammar: the
# noun is what follows it. Not where it starts a word there (这部分, 这项目, 一次性).
_DETERMINERS = frozenset(with_traditional("这那哪"))
_NUMERALS = "".join(with_traditional("一二两三四五六七八九十百千万几半〇"))
_MEASURES = frozenset(with_traditional("本个张件条只隻位部台辆篇份种家项场座所段封间次批套"))
_MEASURE_WORDS = frozenset(
    with_traditional(
        """部分 部门 部署 条件 条款 位置 本地 本人 本身 本来 台风 种类 种子 家庭 家人 家里 家具
        项目 场景 场地 场所 场合 座位 所有 所谓 段落 份额 只有 次数 次性 套餐""".split()
    )
)
# People and months counted after a measure (几个人参加会议, 三个月): grammar too (人参,
# ginseng, was a keyword).
_COUNTED = frozenset("人月")
# A measure that counts no place (台 machines, 本 books), before a place's last character
# closing the piece, is part of its name (五台山, 七台河, 九台区); 座, 条, 个... count
# places (一座山: 山).
_COUNTS_PLACES = frozenset(with_traditional("座条个家所间"))
_PLACE_ENDS = frozenset(with_traditional("山岭峰岛湖河江寺塔桥城村镇县区市路街港湾峡沟"))
# After 要 (will, want), 可以 or 应该, a verb: a piece of three characters opening with
# one of these is the verb and its object, the word sought (我要交报告: 报告; 我要打印文件,
# 提交报告: a verb of two, kept). Not 洗 (洗衣机), nor 玩 (玩具车): nouns of three.
_MODALS = frozenset(with_traditional("要 可以 应该".split()))
_VERBS = frozenset(
    with_traditional("交买卖订看读写学吃喝找查做拿送带寄借换填改删问搬租穿修退领缴听开打发收存办")
)
# 最 (most) and 很 (very) after a noun start what is said of it (哪本书最好: 书, not
# 书最好; 这个问题很重要: 问题), unless 最 starts a time word (最近, 最后, 最初, 最终).
_DEGREES = with_traditional_table({"最": "近后初终", "很": ""})
_DEGREE_AT = re.compile(f"[{''.join(_DEGREES)}]")
# A Han character alone is a word (茶 tea, 猫 cat, 书 book), but these mostly begin or
# join other words, or serve as grammar: alone, they are no keyword; a piece of nothing
# else is none either (去过成都: 去过, 我想去京都: 想去). Nor are what, who and how many
# (何, 谁, 几: Japanese writes 何 and 誰 between its kana, 誰が書きましたか).
_NOT_ALONE = frozenset(
    with_traditional(
        "有不地个要会说去来回很上下中大小对多能想让给着过得到从为以之于其而又再才只还更最没将向等样用找查前后何谁几"
    )
)
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
# Japanese writes a loanword in katakana: a word of its own beside kanji (在留カード).
_KATAKANA = "\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f"
_KATAKANA_OR_NOT = re.compile(f"[{_KATAKANA}]+|[^{_KATAKANA}]+")
_HAS_KATAKANA = re.compile(f"[{_KATAKANA}]")
_KANA_PARTICLES = re.compile("[はがをにでともへのやかねよ]")  # (of a hiragana-only query)


def han_keywords(run: str, in_japanese: bool) -> list[str]:
    """Pieces of a Han/kana run between stop characters (hiragana in Japanese, or in a
    run holding katakana: Chinese writes none), with their bigrams, then the stop
    characters' words, then the Han characters alone. Where two words of ``_WORDS``
    overlap (变成都市), both readings' (变, 成都, 市 and 变成, 都市), unless the second
    leaves the first word's first character alone (成都市: 成, no word)."""
    in_japanese = in_japanese or _HAS_KATAKANA.search(run) is not None
    pieces: list[str] = []
    joined: list[str] = []
    for chunk in HIRAGANA.split(run):
        if in_japanese:
            pieces.extend(_KATAKANA_OR_NOT.findall(chunk))
            continue
        skips = [-1, *_overlapped(chunk)[:_MOST_OVERLAPS]]
        readings = [(skip, parts) for skip in skips if (parts := _parts(chunk, skip))]
        for skip, parts in readings:
            pieces.extend(text for text, is_stop in parts if not is_stop)
            named = len(readings) == 1
            joined.extend(_across_stops(parts, skip >= 0, named) + _opened(parts))
    if in_japanese:
        pieces.extend(kana_nouns(run))  # (おにぎりの作り方: おにぎり)
    out: list[str] = []
    alone: list[str] = []  # (after the longer words: they rank them)
    for piece in pieces + joined:
        piece = unmarked(piece)  # (a mark after a stop: no keyword opens with it)
        if len(piece) < 2:
            if _HAN.fullmatch(piece) and piece not in _NOT_ALONE:
                alone.append(piece)  # 茶, 书在哪里: a word of its own, else nothing was left
            continue
        if _grammar(piece):
            continue
        out.append(piece)
        units = run_units(piece)  # (as the index pairs them: a character with its marks)
        if len(units) > 2:
            out.extend(map("".join, itertools.pairwise(units)))
    out += alone
    if not out and HIRAGANA.fullmatch(run):
        return _kana_keywords(run)
    return out


def _overlapped(chunk: str) -> list[int]:
    """Where a word of ``_WORDS`` starts in ``chunk`` that another one overlaps at its
    end (变成都市: 成都, which 都市 overlaps)."""
    return [
        cut.start()
        for cut in _WORDS_AT.finditer(chunk)
        if any(chunk.startswith(word, cut.end() - 1) for word in _WORDS)
    ]


def _parts(chunk: str, skip: int = -1) -> list[tuple[str, bool]]:
    """``chunk`` cut at its stop words: ``(text, a stop?)`` in order. A word of
    ``_WORDS`` is its stop and the character alone beside it; not one starting at
    ``skip`` (its first character content: the other reading of an overlap). A
    character before ``_ENDS_AFTER_ANY`` is a piece of its own, the start of that word
    (签证申请: 签证 and 申, which 请 joins), and so is one before 要 after its
    ``_ONLY_AFTER``, before 在 a place after 存, before 都 closing a clause after grammar
    (想去京都); after content, that 都 ends the piece (``_ALL``: 東京都). 现在 after a
    longer piece is a stop (``_NOW``), and 有 ending one before a question word
    (``_HAVE``). One of ``_OPENS_WORDS`` opening the chunk is no stop. Measure words
    then, a verb after a modal and what is said after 最 or 很 (``_without_measures``,
    ``_without_verbs``, ``_without_predicates``). None (``[]``) where ``skip``'s character
    would be alone or after grammar only (成都市, 去过成都市: the word's, no other reading)."""
    parts: list[tuple[str, bool]] = []
    at = position = 0
    while (cut := _CUTS.search(chunk, position)) is not None:
        word = cut.group(0)
        position = cut.end()
        if cut.start() == skip:
            if _grammar(chunk[at:skip]):
                return []  # (成都市: 成 alone is no word)
            position = skip + 1  # (the word's stop, then, in the next word)
            continue
        if cut.start() == 0 and word in _OPENS_WORDS:
            continue
        piece = chunk[at : cut.start()]
        at = cut.end()
        if word == _AT and _ends_in_now(piece, chunk[at:], parts[-1:]):
            parts += [(piece[:-1], False)] if len(piece) > 1 else []
            parts.append((piece[-1] + word, True))  # 公司现在的情况: 公司
            continue
        if piece:
            parts.append((piece, False))
        if word in _WORDS:  # (成都: 成 alone, 都 the stop _across_stops joins to it)
            parts += [(char, char in _STOP_IN_WORDS) for char in word]
            continue
        closes = word == _ALL and (at == len(chunk) or chunk[at] in _FINALS)
        if closes and len(piece) > 1 and not _grammar(piece[:-1]):
            parts[-1] = (piece + word, False)  # 東京都
            continue
        saved = word == _AT and piece[-1:] == _SAVE and chunk.startswith(_PLACES, at)
        ends = word in _ENDS_AFTER_ANY or (word == "要" and piece[-1:] in _ONLY_AFTER[word])
        ends = ends or closes or saved
        if len(piece) > 1 and ends and piece[-1] not in _NOT_ALONE:
            parts[-1:] = [(piece[:-1], False), (piece[-1], False)]
        has = len(piece) > 1 and piece[-1] == _HAVE and word.startswith(_ASKING)
        if has and piece[-2:] not in _ENDING_IN_HAVE:
            parts[-1:] = [(piece[:-1], False), (_HAVE, True)]
        parts.append((word, True))
    if at < len(chunk):
        parts.append((chunk[at:], False))
    return _without_predicates(_without_verbs(_without_measures(parts)))


def _ends_in_now(piece: str, rest: str, before: list[tuple[str, bool]]) -> bool:
    """Whether 在 after ``piece`` (after the part ``before`` it, if any), before
    ``rest``, ends 现在 (now): after a word (公司现在的情况), or 现 alone after a pronoun
    (他现在在哪里); not after a word ending in 现 (出现在哪里: ``_ENDING_IN_NOW``), nor
    after a word before a place. Opening the question, 现在 stays a word (现在的工作)."""
    if piece in _NOW:
        return any(is_stop and text in _PRONOUNS for text, is_stop in before)
    ends = len(piece) > 1 and piece[-1] in _NOW and piece[-2:] not in _ENDING_IN_NOW
    return ends and not rest.startswith(_PLACES)


def _without_measures(parts: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """``parts`` with a measure word opening a piece after 这, 那, 哪 or a number a
    stop (那本书: 书, not 本书; 三张照片: 照片; not in a place's name: 五台山), and a
    person or month counted after one (几个人参加会议: 参加会议, not 人参)."""
    out: list[tuple[str, bool]] = []
    for text, is_stop in parts:
        before = out[-1] if out else ("", True)
        if is_stop or not before[1]:  # (a piece after content: its word's end, 申)
            out.append((text, is_stop))
            continue
        numbers = len(text) - len(text.lstrip(_NUMERALS))
        determined = numbers > 0 or before[0][-1:] in _DETERMINERS
        measure = text[numbers : numbers + 2]  # (with the character after it)
        measured = determined and len(measure) == 2 and measure[0] in _MEASURES
        if measured and len(text) == numbers + 2:  # (五台山; 三 alone has no measure)
            measured = measure[0] in _COUNTS_PLACES or measure[1] not in _PLACE_ENDS
        if measured and measure not in _MEASURE_WORDS:
            before = (text[: numbers + 1], True)
            out.append(before)
            text = text[numbers + 1 :]
        if before[1] and before[0][-1:] in _MEASURES and text[:1] in _COUNTED:
            out.append((text[0], True))
            text = text[1:]
        if text:
            out.append((text, False))
    return out


def _without_verbs(parts: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """``parts`` with a verb of ``_VERBS`` opening a piece of three after a modal
    (``_MODALS``) a stop: its object is the word (我要交报告: 报告)."""
    out: list[tuple[str, bool]] = []
    modal = False
    for part in parts:
        text, is_stop = part
        if modal and not is_stop and len(text) == 3 and text[0] in _VERBS:
            out += [(text[0], True), (text[1:], False)]
        else:
            out.append(part)
        modal = is_stop and text in _MODALS
    return out


def _without_predicates(parts: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """``parts`` with what a piece says of its noun after a degree adverb (``_DEGREES``)
    a stop of its own: the noun is the word (书最好: 书)."""
    if _DEGREE_AT.search("".join(text for text, _ in parts), 1) is None:
        return parts
    out: list[tuple[str, bool]] = []
    for text, is_stop in parts:
        at = 0 if is_stop else _says(text)
        out += [(text[:at], False), (text[at:], True)] if at else [(text, is_stop)]
    return out


def _says(text: str) -> int:
    """Where in ``text`` a degree adverb after its first character starts what it says
    (not 最近), or 0."""
    for adverb in _DEGREE_AT.finditer(text, 1):
        if text[adverb.end() : adverb.end() + 1] not in _DEGREES[adverb.group()]:
            return adverb.start()
    return 0


def _grammar(text: str) -> bool:
    """Whether ``text`` is grammar alone: no keyword (去过, 想去)."""
    return all(char in _NOT_ALONE for char in text)


def _across_stops(
    parts: list[tuple[str, bool]], later_first: bool = False, named: bool = True
) -> list[str]:
    """The words a stop character of a chunk (its ``parts``) may be part of, as keywords
    beside the pieces it cuts: one of ``_WORDS`` (``成都``), a particle between two
    pieces of one character (``目的地``; not a pronoun: 帮我查), then one of
    ``_STOP_IN_WORDS`` after such a piece (``首都``, ``现在``), then before one (``都市``;
    ``東京都庁``: ``都庁``); each piece in one word at most (``目的地是首都``: not
    ``地是首``). Cut alone, 目的地 asked for 目 (and found 目标), 京都 for 京 (東京), 首都
    for nothing. ``later_first``: a stop spells the word of ``_WORDS`` after it before
    the one before it (an overlap's other reading: 变成都市 read with 都市, not 成都).
    ``named``: a word of ``_WORDS`` before a place's suffix is one word with it (成都市;
    not where the chunk has another reading: 变成都市)."""

    def lone(number: int) -> bool:  # a piece of one character, in no word yet
        if not 0 <= number < len(parts) or number in used:
            return False
        text, is_stop = parts[number]
        return len(text) == 1 and not is_stop

    words: dict[int, str] = {}
    used: set[int] = set()
    stops = [n for n, (text, is_stop) in enumerate(parts) if is_stop and len(text) == 1]
    for number, side in itertools.product(stops, (1, -1) if later_first else (-1, 1)):
        if number not in words and lone(number + side):
            word = _spelled(parts, number, side)
            if word in _WORDS:
                words[number] = word
                used.add(number + side)
                suffixed = lone(number + 1) and parts[number + 1][0] in _PLACE_SUFFIXES
                if named and side < 0 and suffixed:
                    words[number] += parts[number + 1][0]  # 成都市
                    used.add(number + 1)
    for number in stops:
        if number in words:
            continue
        stop = parts[number][0]
        particle = stop not in _STOP_IN_WORDS and stop != _IS and stop not in _PRONOUNS
        if particle and lone(number - 1) and lone(number + 1):
            words[number] = parts[number - 1][0] + parts[number][0] + parts[number + 1][0]
            used |= {number - 1, number + 1}
    for side in (-1, 1):
        for number in stops:
            if number in words or not _may_pair(parts, number, side):
                continue
            if lone(number + side):
                words[number] = _spelled(parts, number, side)
                used.add(number + side)
    return [words[number] for number in sorted(words)]


def _spelled(parts: list[tuple[str, bool]], number: int, side: int) -> str:
    """Stop ``number`` of ``parts`` with the part on ``side`` of it, in their order."""
    pair = (parts[number + side][0], parts[number][0])
    return "".join(pair if side < 0 else pair[::-1])


def _may_pair(parts: list[tuple[str, bool]], number: int, side: int) -> bool:
    """Whether stop ``number`` of ``parts`` may spell a word with the character on
    ``side``: not grammar beside grammar (都去, 都要, 不是), not beside a character it
    spells no word with (``_ONLY_AFTER``, ``_ONLY_BEFORE``: 要交, 书被; but a stop and
    the character after it asked alone are a word: 和食), not 在 before a
    place (书在哪里: the book, not 书在), not a conjunction before content (猫和狗), not an
    adverb opening a clause (都去哪里了), not 把 or 被 after a pronoun or a noun (我把书,
    妈妈把书: 书)."""
    stop = parts[number][0]
    if not 0 <= number + side < len(parts):
        return False
    text, is_stop = parts[number + side]
    char = text[-1 if side < 0 else 0]
    only = (_ONLY_AFTER if side < 0 else _ONLY_BEFORE).get(stop)
    only = None if side > 0 and len(parts) == 2 else only  # (asked alone: 和食, a word)
    if is_stop or char in _NOT_ALONE or (only is not None and char not in only):
        return False
    if only is None and stop not in _STOP_IN_WORDS:
        return False
    after = parts[number + 1] if number + 1 < len(parts) else ("", True)
    if side < 0:
        conjunction = stop in _CONJUNCTIONS and not after[1]
        return not conjunction and not (stop == _AT and after[0].startswith(_PLACES))
    before = parts[number - 1] if number > 0 else ("", True)
    adverb = stop in _ADVERBS and only is None and before[1] and len(parts) > 2
    marks = stop in _BEFORE_NOUNS and (before[0] in _PRONOUNS or not before[1])
    return not adverb and not marks


def _opened(parts: list[tuple[str, bool]]) -> list[str]:
    """The words a stop opening a clause (the chunk, or after a stop or grammar) spells
    with the longer piece after it (a piece of one character pairs in ``_across_stops``):
    和平公园, 请假流程, 请问请假流程, 我想请假三天, 及时报告, 在家办公, 都江堰.
    Where the stop starts such a word (``_ONLY_BEFORE``: not 和客户, with the client; an
    adverb anywhere: 医院就诊流程); an adverb opening the chunk, before a noun's next
    words (``_NOUN_NEXT``: not 都讨论了什么). Cut alone, 和平公园 asked for 平公园, 都江堰
    for 江堰, 在家办公 for 家办公."""
    words: list[str] = []
    for number, (stop, is_stop) in enumerate(parts[:-1]):
        text, next_is_stop = parts[number + 1]
        if not is_stop or next_is_stop or len(text) < 2 or text[0] in _NOT_ALONE:
            continue
        before = parts[number - 1] if number else ("", True)
        after = parts[number + 2][0] if number + 2 < len(parts) else ""
        listed = text[0] in _ONLY_BEFORE.get(stop, ())
        if stop in _ADVERBS:  # (a word it starts, anywhere: 医院就诊流程)
            opens = listed or (number == 0 and after[:1] in _NOUN_NEXT)
        else:
            opens = listed and (before[1] or _grammar(before[0]))  # (我想请假三天)
        if opens:
            words.append(stop + text)
    return words


def _kana_keywords(run: str) -> list[str]:
    """A query written in hiragana alone (``おさんぽ``): it has no kanji or katakana to
    cut it at, and its words are its kana. The run, and its parts between the
    particles, of two kana or more."""
    parts = [part for part in _KANA_PARTICLES.split(run) if len(part) >= 2]
    return list(dict.fromkeys([run, *parts])) if len(run) >= 2 else []
