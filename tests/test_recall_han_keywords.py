"""Recall's keywords of Chinese and Japanese questions: the content words a person would
search for, with the stop characters that are also part of words (都, 要, 在, 也, 就) read
as words where they are (成都, 東京都, 都市, 就业, 现在) and as grammar where they are not
(我们都去过, 放在哪儿, 也许); and recall finding and quoting the note that says them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from indexer.index.service import NoteIndex
from indexer.jobs.keywords import extract_keywords, query_words
from indexer.jobs.recall import Recall
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace

# (question, the words a person would search for: keywords as the query wrote them,
# without the bigrams cut from a longer one). Those marked "fixed" were wrong before
# (what they gave in brackets); the others pin what already worked.
QUESTIONS = [
    ("我们都去过成都", "成都"),  # fixed (去过成)
    ("成都的天气怎么样", "成都 天气"),
    ("从成都出发要多久", "成都 出发"),  # fixed (从成, 出发, 多久)
    ("他什么时候去成都出差", "成都 出差"),  # fixed (去成, 出差)
    ("首都和成都哪个更大", "首都 成都"),  # fixed (更大 too)
    ("你也在成都吗", "成都"),
    ("我们哪天去成都", "成都"),  # fixed (天去成)
    ("这是都市吗", "都市"),  # fixed (市)
    ("都市生活的压力", "都市 生活 压力"),  # fixed (市生活, 压力)
    ("也许签证已经过期了", "签证 过期"),  # fixed (许签证, 过期)
    ("就业情况怎么样", "就业 情况"),  # fixed (业情况)
    ("今年的就业形势", "今年 就业 形势"),  # fixed (今年, 业形势)
    ("我的书放在哪儿了", "书"),  # fixed (书放)
    ("我的护照放在哪里", "护照"),  # fixed (护照放)
    ("我把钥匙放在哪里了", "钥匙"),  # fixed (钥匙放)
    ("我把书放在哪里了", "书"),  # fixed (书放)
    ("我住在哪家酒店", "酒店"),  # fixed (家酒店, 住)
    ("车停在哪里了", "车"),  # fixed (车停)
    ("他们都在北京吗", "北京"),
    ("大家都在讨论什么", "讨论"),  # fixed (大家, 讨论)
    ("大家都同意这个方案吗", "同意 方案"),  # fixed (大家 too)
    ("我也想去京都", "京都"),  # fixed (想去京)
    ("东京都的人口是多少", "东京都 人口"),  # fixed (东京, 人口)
    ("首都机场在哪里", "首都 机场"),
    ("这个错误出现在哪里", "错误出现"),  # (not 现在)
    ("照片存在哪里", "照片 存"),  # fixed (照片存)
    ("我的被子在哪里", "被子"),
    ("我把包放在哪了", "包"),  # fixed (包放)
    ("申请假期", "申请 假期"),
    ("明天几点开会", "明天 开会"),  # fixed (明天几点开会)
    ("在线课程的链接在哪里", "在线 课程 链接"),  # fixed (线课程, 链接)
    ("会议要求是什么", "会议 要求"),  # fixed (会议, 求是)
    ("这个项目的主要问题", "项目 主要 问题"),
    ("重要的文件放在哪里", "重要 文件"),  # fixed (文件放, 重要)
    ("他也是医生吗", "医生"),
    ("文件被删除了吗", "文件 删除"),
    ("问题在于哪里", "问题"),
    ("東京都に住んでいる", "東京都 住"),  # fixed (東京, 住)
    ("都市計画の資料", "都市計画 資料"),  # fixed (市計画, 資料)
    ("京都の寺の名前は", "京都 寺 名前"),
    ("首都の人口はどのくらい", "首都 人口"),
    ("東京都庁はどこですか", "東京都庁"),  # fixed (東京, 都庁)
    ("在留カードの更新はいつ", "在留 カード 更新"),  # fixed (留カード, 更新)
    ("就職活動の準備", "就職活動 準備"),  # fixed (職活動, 準備)
    ("和食のレストラン", "和食 レストラン"),
    ("都合のいい日はいつ", "都合 日"),
    ("重要な書類の場所", "重要 書類 場所"),
    ("来週の会議はいつですか", "来週 会議"),
    ("会議の要点をまとめて", "会議 要点"),
]


@pytest.mark.parametrize(("question", "words"), QUESTIONS)
def test_a_question_gives_the_words_a_person_would_search_for(question: str, words: str) -> None:
    assert sorted(query_words(extract_keywords(question))) == sorted(words.split())


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # (都 is no stop in Japanese, which writes its grammar in hiragana)
        ("東京都に住んでいる", ["東京都", "東京", "京都", "住"]),
        ("都市計画の資料", ["都市計画", "都市", "市計", "計画", "資料"]),
        ("我的书放在哪儿了", ["书"]),  # (放在: a verb, then 在 at)
        ("这是都市吗", ["都市", "市"]),  # (one of the words read before cutting)
        ("也许明天会下雨", ["明天会下雨", "明天", "天会", "会下", "下雨"]),  # (也许: maybe)
        ("就业情况", ["情况", "就业", "业"]),
        ("都市生活", ["生活", "都市", "市"]),
        ("我们都去过成都", ["成都", "成"]),  # (去过: grammar alone)
        ("主要问题", ["问题", "主要", "主"]),
        ("东京都", ["东京都", "东京", "京都"]),  # (都 closing a clause ends a name)
        ("東京都庁", ["東京", "都庁", "庁"]),  # (as before: no kana, read as Chinese)
    ],
)
def test_the_listed_questions_give_these_keywords(question: str, expected: list[str]) -> None:
    assert extract_keywords(question) == expected


@pytest.fixture
def recall(ws: Workspace, index: NoteIndex) -> Iterator[Recall]:
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    vault.listeners.append(index.note_changed)
    yield Recall(vault, index)


@pytest.mark.parametrize(
    ("lang", "wanted", "other", "question", "heading"),
    [
        (
            "ja",
            "東京都の人口は千四百万人を超えた。",
            "東京駅で友達と会った。東京の人口密度は高い。東京は広い。",
            "東京都の人口は",
            "東京都, 人口",
        ),
        ("zh-CN", "成都的火锅很好吃。", "我去过很多地方旅行。", "我们都去过成都", "成都"),
        ("zh-CN", "成都到重庆的高铁很快。", "从上海出发的航班。", "从成都出发要多久", "出发, 成都"),
        ("zh-CN", "那本书在客厅的书架上。", "我把衣服放在柜子里了。", "我的书放在哪儿了", "书"),
        ("zh-CN", "今年的就业率比去年高。", "今天的天气情况很好。", "就业情况怎么样", "情况, 就业"),
        ("zh-CN", "都市的夜晚很热闹。", "乡下的生活很安静。", "都市生活", "生活, 都市"),
    ],
)
def test_a_word_holding_a_stop_character_recalls_and_quotes_its_note(
    recall: Recall, lang: str, wanted: str, other: str, question: str, heading: str
) -> None:
    """The other note was found first, or alone: 東京都 asked for 東京 (the other note
    said it more often), 成都 for 去过成 or 从成, 书 for 书放 (nothing found), 就业 for
    业情况, 都市 for 市生活 (the other notes said 情况, 生活)."""
    recall.vault.write(lang, "a/wanted.md", f"# a\n\n{wanted}\n")
    recall.vault.write(lang, "b/other.md", f"# b\n\n{other}\n")
    result = recall.recall(lang, question, 1500)
    hits = [s["path"] for s in result["sources"] if s["layer"] == "on_demand"]
    assert hits[:1] == ["a/wanted.md"], (question, extract_keywords(question), hits)
    assert f"## On demand: {heading}\n" in result["block"], result["block"]
    assert f"> {wanted}\n" in result["block"]
