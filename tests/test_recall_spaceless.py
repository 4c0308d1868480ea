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
from indexer.jobs.keywords import MAX_KEYWORDS, extract_keywords
from indexer.jobs.question_words import without_endings, without_question_words
from indexer.jobs.syllables import syllables
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
    ``ကြောင်ဘယ်`` (cat where): the note saying them apart was not found. (``ဘယ်မှာ``,
    where, is taken out now: ``အိပ်`` is a part of its own.)"""
    _with_others(fresh, "my", {"a/cat.md": cat, "b/train.md": "ရထားက ခုနစ်နာရီမှာ ထွက်တယ်"})
    query = "ကြောင်ဘယ်မှာအိပ်လဲ"
    assert on_demand(fresh.recall.recall("my", query, 1500))[:1] == ["a/cat.md"]
    keywords = extract_keywords(query)
    assert "အိပ်" in keywords and not any(k.endswith("ပ်လဲ") for k in keywords[1:])


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


# Marks that close a syllable, no vowel or tone of the letter (thanthakhat, nikhahit,
# yamakkan, Lao's cancellation mark, Khmer's bantoc and toandakhiat, Myanmar's asat)
_CLOSING = "\u0e4c\u0e4d\u0e4e\u0ecc\u17cb\u17cd\u103a"


def signed(text: str) -> bool:
    """Whether ``text`` carries a vowel sign, medial or tone mark (``ခွေး``, ``กิ``)."""
    return any(continues(char) and char not in _CLOSING for char in text)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SPACELESS, min_size=1, max_size=30).map("".join))
def test_no_bare_letter_is_sought_and_the_keywords_stay_few(chunk: str) -> None:
    """A bare letter walks every bigram it starts (slow, and meaning nothing): a piece
    cut from a chunk is two characters as the index pairs them (a bigram: ``คำ``, a
    letter and its SARA AM, is one), or one holding two letters (a Khmer stack, ``ឆ្មា``),
    or a letter with its vowel signs, medials or tone marks (``ခွေး``, dog), and the
    keywords stay under the cap."""
    keywords = extract_keywords(chunk)
    assert len(keywords) <= MAX_KEYWORDS
    while chunk and continues(chunk[0]):  # (a mark of what is before: search drops it)
        chunk = chunk[1:]
    own = {chunk, without_endings(chunk)}  # (the question's own words)
    for keyword in keywords:
        assert (
            letters(keyword) >= 2
            or len(run_units(keyword)) >= 2
            or signed(keyword)
            or keyword in own
        ), keyword


# -- syllables of one letter, question words inside a question, closed syllables ---------


@pytest.mark.parametrize(
    ("query", "sought"),
    [
        ("ခွေးကိုက်လား", ["ခွေး", "ကိုက်"]),  # (dog, bite: one letter and its vowel, two)
        ("ကြောင်ဘာစားလဲ", ["ကြောင်", "စား"]),  # (cat, eat)
        ("គោស៊ីអ្វី", ["គោ", "ស៊ី"]),  # (cow, eat)
        ("ปูกินอะไร", ["ปู", "กิน"]),  # (crab, eat)
        ("ປູກິນຫຍັງ", ["ປູ", "ກິນ"]),
    ],
)
def test_a_syllable_of_one_letter_and_its_vowel_is_sought(query: str, sought: list[str]) -> None:
    """``ခွေး`` (dog) is one consonant with a medial, a vowel sign and a tone mark: it was
    counted as a lone letter and never sought, and ``ခွေးကိုက်လား`` (does the dog bite?)
    looked for ``ကိုက်`` (bite) alone. A bare consonant still is not (``ก`` of ``ก็ก``)."""
    keywords = extract_keywords(query)
    assert all(word in keywords for word in sought), keywords
    assert not any(letters(k) == 1 and not signed(k) for k in keywords), keywords


def test_grammar_words_of_one_letter_and_its_vowel_are_not_sought() -> None:
    """The particles of one letter that are now syllables enough to seek are stop
    words: ``တော့``, ``ဖို့``, ``ថា`` (Thai ``ไป`` and ``มา``, go and come, are two
    letters each, and stop words too)."""
    assert "တော့" not in extract_keywords("ခွေးတော့ကိုက်တယ်")
    assert "ថា" not in extract_keywords("គាត់និយាយថាឆ្កែខាំ")


@pytest.mark.parametrize(
    ("query", "left", "out"),
    [
        ("ကြောင်ဘာစားလဲ", ["ကြောင်", "စား"], "ဘာ"),  # (what: in the middle)
        ("ဘယ်သူလာမလဲ", ["လာ"], "ဘယ်"),  # (who is coming?: at the start)
        ("ကြောင်ဘာကြောင့်အိပ်လဲ", ["ကြောင်", "အိပ်"], "ကြောင့်"),  # (why, whole)
        ("ใครกินขนม", ["กินขนม"], "ใคร"),  # (who ate the snack?)
        ("ทำไมแมวร้อง", ["แมวร้อง"], "ไม"),  # (why does the cat cry?)
        ("ເປັນຫຍັງແມວຮ້ອງ", ["ແມວຮ້ອງ"], "ຫຍັງ"),
        ("ហេតុអ្វីឆ្មាដេក", ["ឆ្មាដេក"], "អ្វី"),
    ],
)
def test_a_question_word_is_taken_out_wherever_it_stands(
    query: str, left: list[str], out: str
) -> None:
    """``ကြောင်ဘာစားလဲ`` (what does the cat eat?) searched ``ဘာစား`` (eat what), its
    pair across the question word: a note holding it ranked above the cat's. Only the
    question itself still holds the question word."""
    keywords = extract_keywords(query)
    assert all(word in keywords for word in left), keywords
    assert not any(out in keyword for keyword in keywords[1:]), keywords


@pytest.mark.parametrize(
    "chunk",
    [
        "ဘာသာစကား",  # (language: begins with ဘာ, what)
        "ကမ္ဘာကြီး",  # (the world: ဘာ under a stack)
        "ဘယ်ဘက်လမ်း",  # (the left side)
        "ល្អណាស់",  # (very good: ណា, which, with a closing letter after it)
        "ผ้าไหมราคา",  # (silk: ไหม asks only at the end)
        "ใคร่ครวญ",  # (to ponder: ใคร, who, with a tone mark)
        "သဘာဝဓာတ်ငွေ့",  # (natural gas: ဘာ inside သဘာဝ, nature)
        "ဒီဇင်ဘာလ",  # (December, and the months September to November: ending in ဘာ)
        "စက်တင်ဘာ",
        "အောက်တိုဘာလမှာ",
    ],
)
def test_a_word_that_only_begins_like_a_question_word_is_kept(chunk: str) -> None:
    """(``သဘာဝ``, ``ဒီဇင်ဘာ``: ``ဘာ`` was cut out of them, and the parts around it,
    ``ဒီဇင်`` and ``လ``, sought apart; the word in no keyword but the whole chunk.)"""
    assert without_question_words(chunk) == [chunk]


def test_a_word_holding_a_question_word_is_sought_beside_one() -> None:
    """``ဒီဇင်ဘာလမှာဘာလုပ်မလဲ`` (what to do in December?): the second ``ဘာ`` is taken out,
    not the first."""
    keywords = extract_keywords("ဒီဇင်ဘာလမှာဘာလုပ်မလဲ")
    assert "ဒီဇင်ဘာလမှာ" in keywords and "လုပ်မ" in keywords, keywords
    assert "ဒီဇင်" not in keywords, keywords


@pytest.mark.parametrize(
    ("query", "stem"),
    [
        ("ประชุมเมื่อไหร่", "ประชุม"),  # (when is the meeting?)
        ("ประชุมเมื่อไร", "ประชุม"),
        ("ສອບເສັງເມື່ອໃດ", "ສອບເສັງ"),  # (when is the exam?)
        ("ກອງປະຊຸມເມື່ອໃດ", "ກອງປະຊຸມ"),
        ("ប្រជុំពេលណា", "ប្រជុំ"),
        ("ផ្ទះណា", "ផ្ទះ"),  # (which house?)
    ],
)
def test_a_question_word_ending_a_question_is_taken_off(query: str, stem: str) -> None:
    """``เมื่อไหร่`` (when) was not among the endings: ``ประชุมเมื่อไหร่`` searched
    ``มื่อไห`` and ``ไหร่``, found in any note asking when (Khmer ``ប្រជុំពេលណា``:
    ``ពេល`` and ``លណា``)."""
    keywords = extract_keywords(query)
    assert keywords[:2] == [query, stem] and all(k in stem for k in keywords[1:]), keywords


@pytest.mark.parametrize(
    ("chunk", "pieces"),
    [
        ("ก็กลับ", ["ก็", "กลับ"]),  # (then went back: ก็ takes no final)
        ("เป็นคน", ["เป็น", "คน"]),  # (mai taikhu, then one final)
        ("ดังกล่าว", ["ดัง", "กล่าว"]),  # (mai han-akat, then one final)
        ("ครัวหลังบ้าน", ["ครัว", "หลัง", "บ้าน"]),  # (ัว ends a syllable)
        ("นำอย่าง", ["นำ", "อย่าง"]),  # (SARA AM)
        ("ละคร", ["ละ", "คร"]),  # (SARA A)
        ("ຫົວໜ້າ", ["ຫົວ", "ໜ້າ"]),  # (Lao mai kon)
        ("บล็อก", ["บล็อก"]),  # (a loan's vowel after mai taikhu)
        ("จันทร์", ["จันทร์"]),  # (silent letters after the final)
        ("สัตว์", ["สัตว์"]),
        # (Khmer: a bare consonant before one carrying a vowel closes the syllable far more
        # often than it starts one: it stays with the one before)
        ("ការងារ", ["ការ", "ងារ"]),
        ("ពេលណា", ["ពេល", "ណា"]),
    ],
)
def test_a_consonant_after_a_closed_syllable_starts_one(chunk: str, pieces: list[str]) -> None:
    """A Thai or Lao bare consonant was glued to the syllable before (``ก็ก|ลับ``,
    ``ครัวห|ลัง``): its own word was cut in two, and ``ก็ก`` was sought."""
    assert ["".join(piece) for piece in syllables(chunk)] == pieces


@pytest.mark.parametrize(
    ("chunk", "pieces"),
    [
        ("ครอบครัว", ["ครอบ", "ครัว"]),  # (family: บ is ครอบ's final, ค starts ครัว)
        ("ถึงอย่าง", ["ถึง", "อย่าง"]),  # (อ is never a final)
        ("ข้างหน้า", ["ข้าง", "หน้า"]),  # (nor is ห)
        ("ผู้หญิง", ["ผู้", "หญิง"]),
        ("ในกลุ่ม", ["ใน", "กลุ่ม"]),  # (ไ and ใ take no final)
        ("เจ้าหน้าที่", ["เจ้า", "หน้า", "ที่"]),
        ("ศาสตร์หรือ", ["ศาสตร์", "หรือ"]),  # (after a silent letter)
        ("ไปอยู่", ["ไป", "อยู่"]),
        ("ขอยืม", ["ขอ", "ยืม"]),  # (อ is ขอ's vowel: it stays)
        ("ปากรับ", ["ปาก", "รับ"]),  # (ก may be ปาก's final: it stays)
        ("กับรัฐ", ["กับ", "รัฐ"]),  # (บ is กับ's one final)
        ("เทศรักษ์", ["เทศ", "รักษ์"]),  # (ศ is เทศ's final: ท is its initial)
        ("เรียกร้อง", ["เรียก", "ร้อง"]),  # (ย is part of เ-ีย: ก is the final)
        # (Khmer: a letter that ends a syllable only in rare loans starts one after a
        # syllable; after a lone letter it may be its final: ``រថ``, vehicle)
        ("អំពីថវិកា", ["អំ", "ពី", "ថវិ", "កា"]),
        ("ការអភិវឌ្ឍ", ["ការ", "អភិវ", "ឌ្ឍ"]),
        ("រថភ្លើង", ["រថ", "ភ្លើង"]),
    ],
)
def test_a_consonant_before_its_cluster_starts_the_syllable(chunk: str, pieces: list[str]) -> None:
    """The first consonant of a cluster (``คร`` of ``ครัว``, ``หน``, ``อย``) was glued to the
    syllable before, a whole one (``ครอบค|รัว``, ``ถึงอ|ย่าง``, ``ข้างห|น้า``; Khmer
    ``ពីថ|វិ``): the largest group of wrong cuts (20,000 pairs of frequent Thai words
    against pythainlp's dictionary syllables: 2,068 wrong cuts, 1,034 now), and ``รัว``,
    ``ย่าง`` (to grill), ``น้า`` (aunt), ``ពីថ`` were sought."""
    assert ["".join(piece) for piece in syllables(chunk)] == pieces


@pytest.mark.parametrize(
    ("query", "sought", "not_sought"),
    [
        ("ครอบครัวใหญ่", ["ครอบ", "ครัว", "ใหญ่"], ["รัว", "ครอบค"]),
        ("ถึงอย่างนั้น", ["ถึง", "อย่าง"], ["ย่าง", "ถึงอ"]),
        ("ข้างหน้าบ้าน", ["ข้าง", "หน้า", "บ้าน"], ["น้า"]),
        ("អំពីថវិកា", ["ថវិ", "កា"], ["ពីថ"]),
    ],
)
def test_a_syllable_begun_by_its_cluster_is_sought(
    query: str, sought: list[str], not_sought: list[str]
) -> None:
    keywords = extract_keywords(query)
    assert set(sought) <= set(keywords) and not set(not_sought) & set(keywords), keywords


def test_a_pair_across_a_stop_word_is_not_sought() -> None:
    """``ก็ก`` (then + a letter) found every note where ก็ comes before a word in ก."""
    keywords = extract_keywords("ก็กลับ")
    assert "กลับ" in keywords and "ก็ก" not in keywords


@pytest.mark.parametrize(
    ("lang", "query", "wanted", "other"),
    [
        # (dog bites? the dog's note, not the mosquito's: ``ခွေး`` was never sought)
        ("my", "ခွေးကိုက်လား", "ခွေးက ဧည့်သည်တွေကို မကြာခဏ ကိုက်တတ်တယ်", "ခြင်ကိုက်တယ်"),
        # (cow eats what? ``គោស៊ី``, glued, was in neither note)
        ("km", "គោស៊ីអ្វី", "គោរបស់ខ្ញុំស៊ីស្មៅនៅវាល", "ឆ្មារបស់ខ្ញុំដេកលើសាឡុង"),
        # (what does the cat eat? the other note asks "what to eat" for dinner)
        ("my", "ကြောင်ဘာစားလဲ", "ကြောင်က ငါးကို ကြိုက်တယ် နေ့တိုင်း စားတယ်", "ညစာ ဘာစားရမလဲ မသိဘူး"),
        # (when is the exam? the other note asks when the rain stops)
        ("th", "สอบเมื่อไหร่", "สอบปลายภาควันที่สิบห้า", "ไม่รู้ว่าฝนจะหยุดเมื่อไหร่"),
        # (the kitchen behind the house: ``ลัง``, crate, was sought, not ``ครัว``)
        ("th", "ครัวหลังบ้าน", "ครัวอยู่ข้างหลัง", "บ้านนี้มีลังไม้เยอะ"),
    ],
)
def test_the_note_about_what_is_asked_comes_first(
    fresh: World, lang: str, query: str, wanted: str, other: str
) -> None:
    _with_others(fresh, lang, {"a/wanted.md": wanted, "b/other.md": other})
    result = fresh.recall.recall(lang, query, 1500)
    assert on_demand(result)[:1] == ["a/wanted.md"], (query, extract_keywords(query))
