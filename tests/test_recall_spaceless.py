"""Recall in Thai, Lao, Khmer and Myanmar, written without spaces between words: every
part of a long chunk is in a keyword, a short question's syllables are sought alone (a
note says them apart), and a question of two chunks is quoted where both are."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_recall import World, on_demand

from indexer.index.text import run_units
from indexer.jobs.keywords import MAX_KEYWORDS, _without_endings, extract_keywords
from shared.graphemes import continues

# Notes of other things: with two notes alone, a word in one of them weighs nothing
# (BM25's IDF), and any note may come first
OTHER = {
    "th": ["รถไฟออกหกโมงเช้า", "พรุ่งนี้ฝนจะตกหนัก", "ประชุมงบประมาณวันจันทร์", "อ่านหนังสือก่อนนอน"],
    "lo": ["ລົດໄຟອອກຫົກໂມງ", "ມື້ອື່ນຝົນຈະຕົກໜັກ", "ປະຊຸມງົບປະມານວັນຈັນ", "ອ່ານປຶ້ມກ່ອນນອນ"],
    "km": ["រថភ្លើងចេញម៉ោងប្រាំមួយ", "ស្អែកភ្លៀងធ្លាក់ខ្លាំង", "ប្រជុំថវិកាថ្ងៃច័ន្ទ", "អានសៀវភៅមុនគេង"],
    "my": ["မန္တလေးရထားထွက်တယ်", "မနက်ဖြန်မိုးရွာမယ်", "တနင်္လာနေ့အစည်းအဝေး", "မအိပ်ခင်စာဖတ်တယ်"],
}


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[World]:
    built = World(tmp_path / "ws")
    yield built
    built.index.close()


def _with_others(world: World, lang: str, notes: dict[str, str]) -> None:
    for number, text in enumerate(OTHER[lang]):
        world.write(lang, f"other/{number}.md", f"# {number}\n\n{text}\n")
    for path, text in notes.items():
        world.write(lang, path, f"# {path}\n\n{text}\n")


@pytest.mark.parametrize(
    "cat",
    [
        "ကြောင်က ညဘက် စားပွဲအောက်မှာ အိပ်တယ်",  # (the cat sleeps under the table at night)
        "ကြောင်က ခုတင်အောက်မှာအိပ်တယ်",  # (under the bed)
    ],
)
def test_the_last_word_of_a_long_question_is_looked_for(fresh: World, cat: str) -> None:
    """``ကြောင်ဘယ်မှာအိပ်လဲ`` (where does the cat sleep?): ``အိပ်`` (sleep) was in no
    window but the one glued to ``လဲ`` (the question mark), and ``ကြောင်`` (cat) only in
    ``ကြောင်ဘယ်`` (cat where): the note saying them apart was not found."""
    _with_others(fresh, "my", {"a/cat.md": cat, "b/train.md": "ရထားက ခုနစ်နာရီမှာ ထွက်တယ်"})
    query = "ကြောင်ဘယ်မှာအိပ်လဲ"
    assert on_demand(fresh.recall.recall("my", query, 1500))[:1] == ["a/cat.md"]
    keywords = extract_keywords(query)
    assert "မှာအိပ်" in keywords and not any(k.endswith("ပ်လဲ") for k in keywords[1:])


@pytest.mark.parametrize(
    ("lang", "query", "wanted", "other"),
    [
        # (แม and มว, the pairs of แมว, cat, also found แม่, mother, and มวย, boxing)
        ("th", "แมวกินอะไร", "แมวของฉันชอบกินปลาทูทุกวัน", "แม่ชอบดูมวยแล้วกินข้าวเย็น"),
        ("th", "หมากัดไหม", "หมาของเพื่อนบ้านชอบกัดรองเท้า", "หมอบอกว่ามากัดฟันตอนนอน"),
        ("lo", "ແມວກິນຫຍັງ", "ແມວຂອງຂ້ອຍມັກກິນປາ", "ແມ່ມັກເບິ່ງມວຍແລ້ວກິນເຂົ້າ"),
        # (two characters as the index pairs them: one bigram, the chunk, and nothing else)
        ("km", "ឆ្មាស៊ីអ្វី", "ឆ្មារបស់ខ្ញុំចូលចិត្តស៊ីត្រី", "គោស៊ីស្មៅនៅវាល"),
        ("km", "ឆ្កែខាំទេ", "ឆ្កែរបស់អ្នកជិតខាងខាំស្បែកជើង", "មូសខាំពេលយប់"),
    ],
)
def test_a_syllable_of_a_short_question_is_sought_alone(
    fresh: World, lang: str, query: str, wanted: str, other: str
) -> None:
    """A one-syllable noun and a verb (what does the cat eat? does the dog bite?): the
    pairs of the noun were found in other words (``แม่``, ``มวย``), the pair across the
    two (``วกิ``) in ``แล้วกิน``; a Khmer question of two stacks had no pairs at all."""
    _with_others(fresh, lang, {"a/wanted.md": wanted, "b/other.md": other})
    result = fresh.recall.recall(lang, query, 1500)
    assert on_demand(result)[:1] == ["a/wanted.md"], (query, extract_keywords(query))


@pytest.mark.parametrize(
    ("lang", "query", "oil", "gold"),
    [
        ("th", "ราคา ทองคำ", "ราคาน้ำมันดีเซลวันนี้ลดลง", "ราคาทองคำแท่งวันนี้ขึ้น"),
        ("th", "ทองคำ ราคา", "ราคาน้ำมันดีเซลวันนี้ลดลง", "ราคาทองคำแท่งวันนี้ขึ้น"),
        ("km", "តម្លៃ មាស", "តម្លៃប្រេងសាំងថ្ងៃនេះធ្លាក់ចុះ", "តម្លៃមាសថ្ងៃនេះឡើងខ្ពស់"),
        ("my", "ဈေးနှုန်း ရွှေ", "ဆီဈေးနှုန်းဒီနေ့ကျဆင်းတယ်", "ရွှေဈေးနှုန်းတွေဒီနေ့တက်တယ်"),
        ("zh-CN", "价格 黄金", "今天汽油价格下降了。", "今天黄金价格上涨了。"),
    ],
)
def test_a_question_of_two_chunks_is_quoted_where_both_are(
    fresh: World, lang: str, query: str, oil: str, gold: str
) -> None:
    """Price, gold: the first paragraph holding either chunk was quoted, the oil price's
    (``ราคา``, price) before the one holding both."""
    fresh.write(lang, "r/prices.md", f"# 1\n\n{oil}\n\n{gold}\n")
    block = fresh.recall.recall(lang, query, 70, path="r")["block"]
    assert gold[:6] in block and oil[:6] not in block, block


@pytest.mark.parametrize(
    ("lang", "query", "oil", "gold"),
    [
        ("th", "ราคาทองคำวันนี้", "ราคาน้ำมันดีเซลวันนี้ลดลง", "ราคาทองคำแท่งวันนี้ขึ้น"),
        ("lo", "ລາຄາຄຳມື້ນີ້", "ລາຄານ້ຳມັນມື້ນີ້ຫຼຸດລົງ", "ລາຄາຄຳແທ່ງມື້ນີ້ຂຶ້ນສູງ"),
        ("km", "តម្លៃមាសថ្ងៃនេះ", "តម្លៃប្រេងសាំងថ្ងៃនេះធ្លាក់ចុះ", "តម្លៃមាសថ្ងៃនេះឡើងខ្ពស់"),
        ("my", "ရွှေဈေးဒီနေ့", "ဆီဈေးနှုန်းဒီနေ့ကျဆင်းတယ်", "ရွှေဈေးနှုန်းတွေဒီနေ့တက်တယ်"),
    ],
)
def test_the_gold_price_today_finds_the_gold_note_and_paragraph_first(
    fresh: World, lang: str, query: str, oil: str, gold: str
) -> None:
    """Lao ``ລາຄາຄຳມື້ນີ້`` matched both notes by ``ລາຄາ`` (price) alone: its windows
    (``ຄາຄຳມື້``) are in neither, and the oil note came first."""
    _with_others(fresh, lang, {"a/oil.md": oil, "b/gold.md": gold})
    assert on_demand(fresh.recall.recall(lang, query, 1500))[:1] == ["b/gold.md"], query
    fresh.write(lang, "r/prices.md", f"# 1\n\n{oil}\n\n{gold}\n")
    block = fresh.recall.recall(lang, query, 70, path="r")["block"]
    assert gold[:6] in block and oil[:6] not in block, block


def letters(text: str) -> int:
    return sum(not continues(char) for char in text)


_SPACELESS = st.sampled_from(
    [*"กขคงจนมยรลวสหอะาิีึืุู่้๊๋ัำเแโใไ์", *"ກຂຄງນມລວສຫອະາິີຶືຸູ່້ັົຳເແໂໃໄ",
     *"កខគងចឆជញដតនបពមយរលវសហអាិីឹឺុូេែៃោៅំះ់៊្", *"ကခဂငစဆဇညတထဒနပဖဗမယရလဝသဟအါာိီုူေဲံ့း်ျြွှ"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_SPACELESS, min_size=1, max_size=30).map("".join))
def test_no_lone_character_is_sought_and_the_keywords_stay_few(chunk: str) -> None:
    """A lone letter walks every bigram it starts (slow, and meaning nothing): a piece
    cut from a chunk is two characters as the index pairs them (a bigram: ``คำ``, a
    letter and its SARA AM, is one), or one holding two letters (a Khmer stack, ``ឆ្មា``),
    and the keywords stay under the cap."""
    keywords = extract_keywords(chunk)
    assert len(keywords) <= MAX_KEYWORDS
    while chunk and continues(chunk[0]):  # (a mark of what is before: search drops it)
        chunk = chunk[1:]
    own = {chunk, _without_endings(chunk)}  # (the question's own words)
    for keyword in keywords:
        assert letters(keyword) >= 2 or len(run_units(keyword)) >= 2 or keyword in own, keyword
