"""Search in scripts written without spaces between words (Thai, Lao, Khmer, Myanmar) next
to Chinese, Japanese and Korean: any 1-6 character substring of a note is found, on a real
NoteIndex over real files and a real SQLite file (no mocks).

The texts are written for these tests: words run together, spaces only between phrases,
with the combining vowels, tone marks and stacked consonants of each script.
"""

from __future__ import annotations

import random
import unicodedata

import pytest

from indexer.index.query import make_snippet
from indexer.index.query_parse import parse_query
from indexer.index.schema import _WORDS_DDL, SCHEMA_VERSION
from indexer.index.service import NoteIndex
from indexer.index.text import CJK_RUN, TOKEN_CHARS
from indexer.sqlite_lib import sqlite3
from shared.errors import InvalidArgumentError
from shared.workspace import Workspace

THAI = [
    "ภาษาไทยเป็นภาษาราชการของประเทศไทย มีผู้พูดเป็นภาษาแม่ประมาณหกสิบล้านคน "
    "ตัวอักษรไทยมีพยัญชนะสี่สิบสี่ตัว สระหลายรูป และวรรณยุกต์สี่รูป "
    "การเขียนภาษาไทยไม่เว้นวรรคระหว่างคำ แต่จะเว้นวรรคเมื่อจบประโยคหรือวลี",
    "เมื่อวานนี้ฉันไปตลาดน้ำกับเพื่อนสนิทสองคน เราออกเดินทางตั้งแต่เช้ามืดเพราะอยากเห็นแม่ค้าพายเรือขายผลไม้ "
    "ที่ตลาดมีทั้งมะม่วง ทุเรียน มังคุด และขนมไทยหลายชนิด "
    "ฉันซื้อข้าวเหนียวมะม่วงมากินหนึ่งห่อ รสชาติหวานมันอร่อยมาก",
    "การเรียนภาษาต่างประเทศต้องใช้ความอดทนและการฝึกฝนทุกวัน "
    "ครูของฉันแนะนำให้อ่านหนังสือพิมพ์ ฟังวิทยุ และจดคำศัพท์ใหม่ลงในสมุดบันทึก "
    "ถ้าจำคำไม่ได้ก็ให้ทบทวนซ้ำๆ จนกว่าจะคุ้นเคย",
    "กรุงเทพมหานครเป็นเมืองหลวงที่มีรถติดมากที่สุดแห่งหนึ่งในโลก "
    "ผู้คนจำนวนมากจึงเลือกเดินทางด้วยรถไฟฟ้าหรือเรือด่วนเจ้าพระยา "
    "ในฤดูฝนน้ำมักท่วมถนนหลายสาย ทำให้การจราจรยิ่งล่าช้า",
    "คุณยายของผมชอบปลูกต้นไม้ดอกไม้ไว้รอบบ้าน ทุกเช้าท่านจะรดน้ำต้นกุหลาบ ต้นมะลิ "
    "และต้นกล้วยไม้ด้วยตัวเอง ท่านบอกว่าการดูแลสวนช่วยให้จิตใจสงบและร่างกายแข็งแรง",
    "ในวันสงกรานต์คนไทยจะกลับบ้านเกิดเพื่อรดน้ำดำหัวผู้ใหญ่ ขอพรจากพ่อแม่ "
    "และทำบุญตักบาตรที่วัด เด็กๆ ชอบเล่นสาดน้ำกันอย่างสนุกสนานตลอดทั้งวัน",
    "ร้านก๋วยเตี๋ยวเรือข้างที่ทำงานเปิดขายมาเกือบสามสิบปีแล้ว น้ำซุปเข้มข้นหอมเครื่องเทศ "
    "ราคาชามละสี่สิบห้าบาท ลูกค้าต้องต่อคิวยาวทุกวันช่วงพักเที่ยง",
    "โปรแกรมเมอร์หลายคนใช้ภาษา Python เขียนสคริปต์สำหรับจัดการไฟล์ "
    "การค้นหาข้อความภาษาไทยในฐานข้อมูลเป็นเรื่องยาก เพราะต้องตัดคำก่อนจึงจะค้นหาได้ถูกต้อง",
    "เมื่อ พ.ศ. ๒๕๖๗ กรุงเทพฯ มีนักท่องเที่ยวต่างชาติมากกว่ายี่สิบล้านคน หลายคนไปไหว้พระแก้วมรกตและชมพระบรมมหาราชวัง",
    "พระสงฆ์สวดมนต์ว่า พุทฺธํ สรณํ คจฺฉามิ ธมฺมํ สรณํ คจฺฉามิ ญาติโยมนั่งพนมมือฟังด้วยความศรัทธา",
    "หมอแนะนำให้ดื่มน้ำวันละแปดแก้ว นอนหลับพักผ่อนให้เพียงพอ "
    "และออกกำลังกายสัปดาห์ละสามครั้ง โรคภัยไข้เจ็บจะได้ไม่มาเยือน",
    "น้องสาวของฉันเพิ่งสอบเข้ามหาวิทยาลัยได้ คณะวิศวกรรมศาสตร์ "
    "พ่อกับแม่ดีใจมากจึงพาทั้งครอบครัวไปกินข้าวที่ร้านอาหารทะเลริมหาด",
]
LAO = [
    "ພາສາລາວເປັນພາສາທາງການຂອງສາທາລະນະລັດປະຊາທິປະໄຕປະຊາຊົນລາວ ຄົນລາວມັກກິນເຂົ້າໜຽວກັບປີ້ງໄກ່ ແລະຕຳໝາກຫຸ່ງ",
    "ນະຄອນຫຼວງວຽງຈັນຕັ້ງຢູ່ແຄມແມ່ນ້ຳຂອງ ໃນເດືອນເມສາມີບຸນປີໃໝ່ລາວ ຜູ້ຄົນຫົດນ້ຳໃສ່ກັນຢ່າງມ່ວນຊື່ນ",
    "ນັກຮຽນໄປໂຮງຮຽນທຸກມື້ ຄູສອນໃຫ້ອ່ານປຶ້ມແລະຂຽນໜັງສືໃຫ້ງາມ",
]
KHMER = [
    "ភាសាខ្មែរជាភាសាផ្លូវការរបស់ព្រះរាជាណាចក្រកម្ពុជា។ ប្រជាជនកម្ពុជាភាគច្រើនរស់នៅតាមជនបទ ហើយធ្វើស្រែចម្ការ។",
    "ប្រាសាទអង្គរវត្តគឺជានិមិត្តរូបរបស់ជាតិ ហើយភ្ញៀវទេសចរជាច្រើនមកទស្សនាជារៀងរាល់ឆ្នាំ។",
    "ខ្ញុំចូលចិត្តញ៉ាំអាម៉ុកត្រី និងបាយជាមួយសម្លម្ជូរ។ ម្ដាយខ្ញុំធ្វើម្ហូបឆ្ងាញ់ណាស់។",
]
MYANMAR = [
    "မြန်မာဘာသာသည် မြန်မာနိုင်ငံ၏ ရုံးသုံးဘာသာစကား ဖြစ်သည်။ "
    "ရန်ကုန်မြို့သည် နိုင်ငံ၏ အကြီးဆုံးမြို့ ဖြစ်ပြီး ရွှေတိဂုံစေတီတော်ကြီး တည်ရှိရာ နေရာ ဖြစ်သည်။",
    "မြန်မာလူမျိုးများသည် လက်ဖက်သုပ်နှင့် မုန့်ဟင်းခါးကို နှစ်သက်ကြသည်။ သင်္ကြန်ပွဲတော်တွင် လူငယ်များ ရေပက်ကစားကြသည်။",
    "ကျောင်းသားများသည် နေ့တိုင်း စာကြည့်တိုက်သို့ သွားပြီး စာအုပ်များ ဖတ်ကြသည်။",
]
CHINESE = [
    "中文的句子之间没有空格，所以搜索引擎需要把文字切成小段。我们昨天去了北京的博物馆，看到很多古代的文物。",
    "学习外语需要耐心和每天的练习。老师建议我们多读报纸，多听广播，把新词写在笔记本上。",
]
JAPANESE = [
    "日本語の文には単語の間に空白がありません。昨日は友達と東京の美術館に行って、"
    "たくさんの絵を見ました。",
    "外国語の勉強には毎日の練習が大切です。先生は新聞を読んで、ラジオを聞くように言いました。",
]
KOREAN = [
    "한국어는 단어 사이에 띄어쓰기를 합니다. "
    "어제 친구와 함께 서울의 박물관에 가서 옛날 물건을 많이 보았습니다.",
    "외국어를 배우려면 매일 연습하는 것이 중요합니다. "
    "선생님은 신문을 읽고 라디오를 들으라고 하셨습니다.",
]
SAMPLES = {
    "th": THAI,
    "lo": LAO,
    "km": KHMER,
    "my": MYANMAR,
    "zh": CHINESE,
    "ja": JAPANESE,
    "ko": KOREAN,
}


def put(ws: Workspace, lang: str, rel: str, text: str) -> None:
    path = ws.vault_dir(lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def paths(index: NoteIndex, lang: str, query: str) -> set[str]:
    return {hit["path"] for hit in index.search(lang, query, limit=100)["results"]}


def _corpus(ws: Workspace, lang: str, rng: random.Random, notes: int) -> dict[str, str]:
    """Notes made of shuffled paragraphs of the sample, the first phrase as title."""
    paragraphs = SAMPLES[lang]
    texts = {}
    for n in range(notes):
        chosen = rng.sample(paragraphs, rng.randint(1, min(4, len(paragraphs))))
        title = chosen[0].split()[0][:12]
        text = f"---\ntitle: {title}\ntags: [{lang}]\n---\n" + "\n\n".join(chosen) + "\n"
        rel = f"notes/{n:02d}.md"
        put(ws, lang, rel, text)
        texts[rel] = text
    return texts


def _searchable(query: str) -> bool:
    """A substring worth asking for: some letter or digit (marks alone belong to a
    letter not asked for), and no Latin letters (Latin words are matched whole, not as
    substrings) nor digits (any script's are ASCII ones to search: a number is a word)."""
    has_word = any(unicodedata.category(c)[0] in "LN" for c in _from_a_letter(query))
    return has_word and not any((c.isascii() and c.isalnum()) or c.isdecimal() for c in query)


def _from_a_letter(query: str) -> str:
    """``query`` from the first letter that starts a character as seen: the marks before
    it, and a consonant stacked below a letter not asked for, belong to that letter."""
    while query and unicodedata.category(query[0]).startswith("M"):
        query = query[2:] if query[0] in _STACKERS else query[1:]
    return query


def _recall(
    index: NoteIndex, lang: str, texts: dict[str, str], queries: list[str]
) -> tuple[float, list[str]]:
    """Share of (query, note holding it) pairs found; the queries missing something."""
    wanted = found = 0
    missed: list[str] = []
    for query in queries:
        expected = {rel for rel, text in texts.items() if _holds(text, query)}
        try:
            hits = paths(index, lang, query)
        except InvalidArgumentError:
            hits = set()
        wanted += len(expected)
        found += len(expected & hits)
        if not expected <= hits:
            missed.append(query)
        # Inside one run of a script without spaces, the hits are exactly the notes (but
        # from a mark on: the letter it is written on is not asked for, so any letter).
        on_mark = unicodedata.category(query[0]).startswith("M")
        if CJK_RUN.fullmatch(query) and hits != expected and not on_mark:
            missed.append(f"{query} (extra hits)")
    return found / wanted, missed


_STACKERS = "\u17d2\u1039"  # Khmer coeng, Myanmar's invisible virama


def _holds(text: str, query: str) -> bool:
    """Whether ``text`` holds ``query`` as search finds it: anywhere, but not from inside
    a stacked consonant (after its stacking sign) nor to a stacking sign alone."""
    if query[0] in _STACKERS or query[-1] in _STACKERS:
        return False
    at = text.find(query)
    while at >= 0:
        if at == 0 or text[at - 1] not in _STACKERS:
            return True
        at = text.find(query, at + 1)
    return False


def _substrings(texts: dict[str, str], rng: random.Random, count: int) -> list[str]:
    """``count`` distinct random 2-6 character substrings of the note bodies (they may
    start or end on a combining mark, hold spaces or punctuation)."""
    bodies = [text.split("\n---\n", 1)[1] for text in texts.values()]
    asked: dict[str, None] = {}
    while len(asked) < count:
        body = rng.choice(bodies)
        length = rng.randint(2, 6)
        start = rng.randrange(len(body) - length)
        query = body[start : start + length]
        if _searchable(query):
            asked[query] = None
    return list(asked)


@pytest.mark.parametrize(
    ("lang", "notes", "queries"),
    [
        ("th", 30, 600),
        ("lo", 8, 200),
        ("km", 8, 200),
        ("my", 8, 200),
        ("zh", 6, 150),
        ("ja", 6, 150),
        ("ko", 6, 150),
    ],
)
def test_any_substring_is_found(
    ws: Workspace, index: NoteIndex, lang: str, notes: int, queries: int
) -> None:
    rng = random.Random(lang)
    texts = _corpus(ws, lang, rng, notes)
    index.reconcile()
    recall, missed = _recall(index, lang, texts, _substrings(texts, rng, queries))
    assert recall == 1.0, f"{lang}: recall {recall:.2f}, missed {missed[:20]}"


@pytest.mark.parametrize("lang", SAMPLES)
def test_every_single_character_is_found(ws: Workspace, index: NoteIndex, lang: str) -> None:
    texts = _corpus(ws, lang, random.Random(lang), 6)
    index.reconcile()
    chars = sorted({c for p in SAMPLES[lang] for c in p if _searchable(c) and c not in _STACKERS})
    recall, missed = _recall(index, lang, texts, chars)
    assert recall == 1.0, f"{lang}: recall {recall:.2f}, missed {missed[:20]}"


def test_run_class_is_every_letter_digit_and_mark_of_the_four_scripts() -> None:
    blocks = [(0x0E00, 0x0E7F), (0x0E80, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF)]
    for lo, hi in blocks:
        for code in range(lo, hi + 1):
            char = chr(code)
            category = unicodedata.category(char)
            in_run = CJK_RUN.fullmatch(char) is not None
            assert in_run == (category[0] in "LNM") or category == "Cn", (hex(code), category)
            assert in_run == (char in TOKEN_CHARS), hex(code)


def test_the_word_table_keeps_every_run_character_whole() -> None:
    """unicode61 with our tokenchars: each character of TOKEN_CHARS is a token on its own
    and inside a bigram (``remove_diacritics 2`` must not strip the marks)."""
    conn = sqlite3.connect(":memory:")
    conn.execute(_WORDS_DDL)
    conn.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(notes_fts, 'row')")
    text = " ".join(TOKEN_CHARS) + " " + " ".join("ก" + c for c in TOKEN_CHARS)
    conn.execute("INSERT INTO notes_fts (rowid, body) VALUES (1, ?)", (text,))
    terms = {term for (term,) in conn.execute("SELECT term FROM vocab")}
    assert terms == set(TOKEN_CHARS) | {"ก" + c for c in TOKEN_CHARS}


@pytest.mark.parametrize(
    ("lang", "inside", "word", "other"),
    [
        ("km", "ខ្ញុំចូលចិត្តតន្ត្រី", "ត្រី", "អាម៉ុកត្រីឆ្ងាញ់"),  # fish inside music
        ("my", "ကမ္ဘာကြီး", "ဘာ", "ဘာလဲ"),  # "what" inside "world"
    ],
)
def test_a_word_is_not_found_from_inside_a_stacked_consonant(
    ws: Workspace, index: NoteIndex, lang: str, inside: str, word: str, other: str
) -> None:
    """The bigrams paired a stacked consonant's sign with the letter below: ``ត្រី``
    found every note saying ``តន្ត្រី``, highlighted from inside its stack."""
    put(ws, lang, "inside.md", f"{inside}\n")
    put(ws, lang, "word.md", f"{other}\n")
    index.reconcile()
    assert paths(index, lang, word) == {"word.md"}
    assert paths(index, lang, inside) == {"inside.md"}


def test_thai_with_latin_words_and_phrases(ws: Workspace, index: NoteIndex) -> None:
    put(ws, "th", "a.md", "สอนเขียนPythonฟรี กรุงเทพ tower และ ในกรุงเทพ tower")
    put(ws, "th", "b.md", "กรุงเทพมหานคร tower")
    index.reconcile()
    assert paths(index, "th", "Python") == {"a.md"}
    assert paths(index, "th", "เขียน") == {"a.md"}
    assert paths(index, "th", '"กรุงเทพ tower"') == {"a.md"}
    assert paths(index, "th", "กรุงเทพ tower") == {"a.md", "b.md"}
    assert paths(index, "th", "มหา") == {"b.md"}
    assert paths(index, "th", "ฟรี Python") == {"a.md"}
    assert paths(index, "th", "ท") == {"a.md", "b.md"}  # one letter: like one kanji
    assert paths(index, "th", "ฟ") == {"a.md"}


@pytest.mark.parametrize(
    ("query", "match"),
    [
        # a letter with its marks is one character; the last may take more in the text
        (  # (SARA AM: one letter, two with the tone mark first, two with it last)
            "ตลาดน้ำ",
            '("ตล ลา าด ดน้ น้ำ" * OR "ตล ลา าด ดน้ํ น้ํา" * OR "ตล ลา าด ดนํ้ นํ้า" *)',
        ),
        ("น", '"น" *'),
        ("้ำใ", '"ำใ" *'),  # a mark first: its letter is not asked for, so any letter
        ('"ภาษา Python"', '"ภา าษ ษา า Python"'),
        ("ภาษาPython", '"ภา าษ ษา า Python"'),
        ("ไทย 東京", '"ไท ทย" * AND "東京"'),
    ],
)
def test_thai_queries_are_expanded_like_cjk(query: str, match: str) -> None:
    assert parse_query(query).match == match


@pytest.mark.parametrize("query", ["่", "่ ้", "\u103a\u1039\u1000"])
def test_marks_alone_are_no_searchable_word(query: str) -> None:
    """A tone mark alone (or a Myanmar asat and a stacked consonant) is part of a
    character whose letter the query does not give: refused, not searched as nothing."""
    with pytest.raises(InvalidArgumentError, match="no searchable words"):
        parse_query(query)


def test_a_thai_query_is_one_bigram_per_two_characters(ws: Workspace, index: NoteIndex) -> None:
    """``ก่า`` was the phrase of two bigrams of code points, ``ก่ ่า``: the second is in most
    Thai texts, and ranking it cost what a common word's does. A character as seen is one
    letter and its marks; a query ending before the text's marks still finds it."""
    assert parse_query("ก่า").match == '"ก่า" *'
    put(ws, "th", "a.md", "กินข้าวแล้ว ราคาถูกกว่า\n")
    put(ws, "th", "b.md", "ขนมไทย น้ำตาล\n")
    index.reconcile()
    for query in ("กินข", "กินข้", "กินข้าว", "ข้", "กว่า", "ว่า", "ราคาถูกกว"):
        assert paths(index, "th", query) == {"a.md"}, query
    assert paths(index, "th", "่า") == {"a.md", "b.md"}  # (from a mark: ``า``, ``ตาล`` too)
    assert paths(index, "th", "น้ำ") == {"b.md"}
    assert paths(index, "th", "นำ") == set()  # (the tone mark tells words apart)


def test_snippets_highlight_thai_hits(ws: Workspace, index: NoteIndex) -> None:
    body = "เมื่อวานนี้ฉันไปตลาดน้ำกับเพื่อน ที่ตลาดน้ำมีผลไม้มากมาย"
    snippet = make_snippet(body, parse_query("ตลาดน้ำ").terms)
    assert snippet.count("**ตลาดน้ำ**") == 2
    # a query starting on a mark marks the whole character it is part of (a mark alone
    # between ** showed as an orphan)
    assert "**น้ำ**" in make_snippet(body, parse_query("้ำ").terms)
    put(ws, "th", "a.md", "---\ntitle: ตลาด\n---\n" + body + " Python")
    index.reconcile()
    (hit,) = index.search("th", "ตลาดน้ำ python")["results"]
    assert hit["snippet"].count("**ตลาดน้ำ**") == 2 and "**Python**" in hit["snippet"]


def test_an_index_of_the_previous_schema_is_recreated(ws: Workspace) -> None:
    """Schema 1 cut Thai at its marks; such a file is rebuilt, not searched wrongly."""
    put(ws, "th", "a.md", THAI[1])
    idx = NoteIndex(ws)
    idx.open()
    idx.reconcile()
    idx.close()
    conn = sqlite3.connect(ws.index_path)
    conn.execute("DROP TABLE notes_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE notes_fts USING fts5(title, tags, body, meta, lang,"
        " content='', tokenize='unicode61 remove_diacritics 2')"
    )
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    conn.close()
    again = NoteIndex(ws)
    again.open()
    assert again.counts() == {}
    again.reconcile()
    assert paths(again, "th", "ตลาดน้ำ") == {"a.md"}
    assert paths(again, "th", "่วง") == {"a.md"}
    again.close()
    conn = sqlite3.connect(ws.index_path)
    (ddl,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'notes_fts'").fetchone()
    conn.close()
    assert "tokenchars" in ddl


# What each schema version indexes of the texts below (sha256, first 16 hex digits). A
# past version's pin is what releases wrote under that number: never edit it, add one.
# (24's rows changed three times after releases had stamped it, its pin edited each time,
# and upgraded indexes kept the rows of the older rule: a decomposed Korean note no grep
# candidate, a typed frontmatter abstract ignored; schema 25 rebuilds them.)
# (26's texts hold no-break spaces, which 25's abstracts folded: a third note since.)
# (27's rows keep the file's mode and group: the notes table's DDL is in the digest since;
# and a tags string is cut at any script's comma: a fourth note since.)
INDEXED_BY_VERSION = {
    24: "85bd5422dd54ee97",
    25: "1bec4d5a27d3a63a",
    26: "41b3ea0daf1d6cca",
    27: "170b6d4f593ffbf1",
}


def indexed_digest() -> str:
    """A digest of the tables' DDL and every value ``parse`` makes of two notes' rows
    (the whole row, its FTS and trigram texts): what an index of this schema holds."""
    import dataclasses
    import hashlib

    from indexer.index.parse import fts_values, parse_note, trigram_value
    from indexer.index.schema import _TABLES_DDL

    text = (
        '---\ntitle: ตลาดน้ำ 東京\ntags: [ไทย, x, no, 010, שָׁלוֹם, "a\u200b", "\u200b", کتاب, كتاب,'
        " উৎসব]\n"
        "summary: ខ្មែរ မြန်မာ ລາວ\n"
        "due: 2023-02-30\n---\n"
        "Body ภาษาไทย 中文 한국어 café दिल كَتَبَ סֵפֶר cafe\u0301 Ἀθῆναι ＡＢＣ ｱｲｳ\n"
        "party\U0001f973 data\u200bbase \u2067مرحبا\u2069 Straße Iğdır Đà Łódź Ørsted\n"
        "I \u2764\ufe0flove 1\ufe0f\u20e3First\n"
        "ᲛᲗᲐᲕᲐᲠᲘ ꮳꮃꭹ \U0001e900\U000104b0\n"
        "ĳsbeer Երևան \U0001d412\U0001d42d ⓒⓐⓕⓔ ёжик co\u034fmes мʼясо അവൻ װאַסער ٢٠٢٤ ปี๒๕๖๗ উৎসব\n"
        "#inline/tag `#code` #ไทย #123 #\u200b #b\u200b #\u200b12\n"
    )
    row = parse_note(text.encode(), "a.md")
    values = fts_values("th", row.title, row.tags, row.body, row.frontmatter)
    typed = parse_note(b"---\nabstract: 12345\n---\nFirst paragraph.\n", "b.md")
    spaced = parse_note("Prix\u00a0: 1\u202f000\u00a0€ «\u00a0x\u00a0»\n".encode(), "c.md")
    commas = parse_note("---\ntags: شعر، أدب, 数据，索引、表\n---\n".encode(), "d.md")
    seen = repr(
        (
            _TABLES_DDL,  # every table's (26's pin and those before: the FTS tables')
            values,
            trigram_value(row.head, row.body, True),
            dataclasses.asdict(row),
            dataclasses.asdict(typed),
            dataclasses.asdict(spaced),
            dataclasses.asdict(commas),  # (27's pin and after)
        )
    )
    return hashlib.sha256(seen.encode()).hexdigest()[:16]


def test_what_is_indexed_is_pinned_to_the_schema_version() -> None:
    """An index keeps what an older indexer wrote under the same SCHEMA_VERSION: a change
    of the tables or of the rows' values must bump it (so old files are recreated), and
    add the new version's pin to INDEXED_BY_VERSION."""
    assert INDEXED_BY_VERSION.get(SCHEMA_VERSION) == indexed_digest(), "bump SCHEMA_VERSION"
