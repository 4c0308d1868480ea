"""Keywords of a natural-language query, for recall's on-demand layer.

"What did we decide about the database migration?" should search for ``decide``,
``database`` and ``migration``, any of them (ranked by BM25), not for every word of the
sentence. Words of languages written with spaces are lower-cased and dropped when they
are common stop words (``stop_words``: 30-odd languages, one set, and the ambiguous
words the question's language makes stop words, unless capitalized inside a sentence
(and not every word is: ``Var Är Min Katt?``): ``min`` in ``Var är min katt?``, but not
those a Vietnamese question writes as words:
``di`` of ``di động``, ``question_language``; the Arabic and Hebrew article and the
Persian plural taken off; Korean particles stripped; Armenian's question and emphasis
marks, written on a word's vowel, taken out), unless written in capitals (an acronym:
``AI``). Scripts written without spaces reuse the index's text machinery
(``indexer.index.text``): a Chinese or Japanese run is cut at stop characters (Chinese
function words; in a Japanese question (hiragana, or kanji simplified Chinese does not
write, with no sign of traditional Chinese: ``han_script``) or a run holding katakana,
its hiragana, which mostly spells particles and endings, and its katakana:
``han_keywords``), and each remaining piece of two or more characters becomes
a keyword together with its bigrams (the index's own unit, so a partial match still
ranks); a Thai, Lao, Khmer or Myanmar chunk becomes a keyword, without the question
words glued to it (``question_words``), with its 4-character windows when it is long,
its pairs when short (``short_chunks``), and its syllables but bare letters
(``syllables``: a word the question glues to others, which a note says apart).
"Quoted phrases" are kept as phrases. The question is read as search reads it
(``indexer.index.text.searchable``): without Arabic and Hebrew points (``مَن`` is the
stop word ``من``), and without the invisible characters inside a run written without
spaces (``葛\\U000e0100城`` is ``葛城``); in a spaced script's word they stay, but are
not read when its stop words are (``wh\\u00adat``).
"""

from __future__ import annotations

import re
import string
import unicodedata

import re2

from indexer.index.arabic_article import without_article
from indexer.index.digit_groups import grouped_numbers
from indexer.index.hebrew_prefixes import without_the
from indexer.index.persian_forms import without_plural
from indexer.index.text import (
    CJK_CHARS,
    CJK_RUN,
    FORMAT_CHARS,
    SHOWING_NOTHING,
    SPACELESS_RUN,
    stream_safe,
)
from indexer.jobs.han_keywords import han_keywords
from indexer.jobs.han_script import japanese
from indexer.jobs.question_language import Shown, shown_stops
from indexer.jobs.question_words import ENDINGS, without_endings, without_question_words
from indexer.jobs.short_chunks import OTHER_STOPS, pairs
from indexer.jobs.stop_words import is_stop
from indexer.jobs.syllables import bare, closes, syllables
from indexer.jobs.vietnamese_words import syllable
from shared.graphemes import continues, unmarked
from shared.reader_folds import FORMAT_CLASS, FORMAT_RUNS, OPTIONAL_MARKS

MAX_KEYWORDS = 24
_STACKING = "\u17d2\u1039"  # Khmer's coeng, Myanmar's virama: the next consonant goes below

_STOP_TH = frozenset(
    """ที่ ของ และ ใน เป็น การ มี ได้ ไม่ จะ ให้ กับ ว่า นี้ นั้น แต่ หรือ ก็ คือ ไป มา อยู่ แล้ว
    ครับ ค่ะ คะ นะ ไหม อะไร อย่างไร ยังไง เมื่อ เรา ผม ฉัน คุณ เขา นี่""".split()
)
_KO_PARTICLE_TEXT = "을 를 은 는 이 가 에 에서 의 로 으로 와 과 도 만 에게 한테 께서 이나 나"
_KO_PARTICLES = tuple(sorted(_KO_PARTICLE_TEXT.split(), key=len, reverse=True))
# Particles that also end many nouns (고양이 cat, 전문가 expert, 고속도로 highway, 사과
# apple): the word is kept beside its stem (고양 alone also found 고양시, the city)
_KO_NOUN_ENDINGS = frozenset("이 가 도 로 과 의 나 만".split())
# A noun of two syllables or more made a verb by 하다 or 되다 (``결정했나요``, did you
# decide; ``변경된``, changed): the noun is sought too (the first such syllable after two)
_KO_VERB = re.compile("([\uac00-\ud7a3]{2,}?)[하한할함합해했되된될됐됨됩돼]")
# (checked once the particle is off: 어디에서 is 어디, 무엇을 무엇; a particle after one
# syllable stays: 누가, 제가)
_STOP_KO = frozenset(
    """무엇 뭐 어떻게 왜 언제 어디 누구 그리고 그러나 하지만 그 이 저 것 어디서 누가 무슨 어느
    어떤 뭘 뭔 뭐가 제가 내가 나는 저는 저의 나의 너의 우리 저희 당신 있어 있어요 있나요 있니
    있습니까 입니다 입니까 대해 관해""".split()
)
_QUOTED = re.compile(r'"([^"]+)"')
_CYRILLIC = re.compile("[\u0400-\u052f\u1c80-\u1c8f\u2de0-\u2dff\ua640-\ua69f]")
# A letter or digit, then letters, digits and marks (a Devanagari vowel sign is part of
# its word, as indexed; a mark after an emoji is the emoji's: ``I❤️love`` gave the
# keyword ``\ufe0flove`` to recall's heading);
# the invisible characters search drops inside a word (``text.searchable``) join it:
# Persian's ZWNJ (``می‌خواهم``), the ZWJ of Sinhala's ``ශ්‍රී`` or Bengali's ``র‍্যাব``,
# Mongolian's vowel separator, a zero-width space. (They cut it: ``ශ්`` and ``රී`` found
# nothing, since search reads one word there.) After an apostrophe, a letter or digit
# (``l'\u0301x`` gave the keyword ``\u0301x``, a mark opening it).
_WORD = re2.compile(
    rf"[\pL\pN][\pL\pN\pM]*(?:(?:['’ʼ][\pL\pN]|[{SHOWING_NOTHING}]+[\pL\pN\pM])[\pL\pN\pM]*)*"
)
# Runs of Han, kana and hangul (``text.SPACELESS_RUN``: Thai-like runs, kept apart)
CJK_ONLY_RUN = re.compile(f"[{CJK_CHARS}]+")
_HANGUL = re.compile("[\uac00-\ud7a3]+")
# Thai-like runs cut at their digits, as search reads them (a number is a word of its own,
# in ASCII digits: ``ปี๒๕๖๗`` is ``ปี`` and ``2567``; the keyword ``นปี๒๕`` found nothing)
_SPACELESS_LETTERS = re.compile(f"(?:(?!\\d){SPACELESS_RUN.pattern.removesuffix('+')})+")
# Armenian's question, emphasis and exclamation marks, written on the stressed vowel
# (``Որտե՞ղ``, where?): they cut the word in two (``որտե``), neither a stop word
_ARMENIAN_MARKS = re.compile("[\u055b\u055c\u055e]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# What search drops (``text.searchable``) between two characters of a run written without
# spaces: a variation selector, a zero-width space or joiner, a soft hyphen (``葛\U000e0100城``
# is indexed ``葛城``; the run was cut there, and ``葛`` alone is no keyword). Inside a word
# of a spaced script they join it already (``_WORD``) and stay, as written.
_RUN_CHAR = CJK_RUN.pattern.removesuffix("+")
_IN_RUN_FORMAT = re.compile(f"(?<={_RUN_CHAR})[{FORMAT_CLASS}]+(?={_RUN_CHAR})")
_WIDTH_FORMS = re.compile("[\uff01-\uffef]+")
# What a sentence's first word follows (a capital there is no name's)
_SENTENCE_ENDS = frozenset(".!?;:…¿¡\n\r")
# What may stand between them and the word: spaces, an opening bracket or quote, a list's
# bullet, emphasis (``(Var är min katt?)``, ``- Dove sono le chiavi?``: no names)
_OPENING = frozenset(" \t([{«‹“‘„\"'*_-–—•>#")
# Punctuation around a word, for ``shown_stops``'s words: cut at spaces, since a pass of
# ``_WORD`` (re2) costs as much as the rest of ``extract_keywords``
_AROUND = string.punctuation + "¿¡«»“”„‘’…–—؟،؛।॥։።"
_TOKEN = re.compile(r"\S+")
# The word after another, spaces alone between them (``_name_follows``)
_FOLLOWING = re.compile(r"[ \t\u00a0]+(\S+)")


def extract_keywords(query: str) -> list[str]:
    """Keywords of ``query`` (in NFC) in order of appearance, without duplicates, at most
    ``MAX_KEYWORDS``; a quoted phrase is one keyword (written with its quotes). The
    syllables of Thai-like chunks come last: the cap never takes a window's place for
    them (every part of a long chunk stays in a keyword)."""
    query = _SURROGATE.sub("\ufffd", query)  # SQLite cannot bind a lone surrogate
    # Full- and half-width forms as their letters, as search reads them: a half-width
    # kana and its voicing mark are one (``ﾃﾞｰﾀ``: ``データ``; its pairs were ``ﾞｰ``,
    # ``ﾀﾍ``), ``ＷＨＡＴ`` a stop word. (Not every compatibility form: ``ﷺ`` is 18.)
    query = _WIDTH_FORMS.sub(lambda forms: unicodedata.normalize("NFKC", forms.group()), query)
    # In NFC, as search reads it (a Korean question typed in jamo gave pairs of jamo,
    # ``\u1169\u110b``, and no syllable); ``stream_safe``: linear on a long run of marks
    if not unicodedata.is_normalized("NFC", query):
        query = unicodedata.normalize("NFC", stream_safe(query))
    # Without Arabic and Hebrew points, as search reads them (``مَن`` is the stop word
    # ``من``, ``البَيانات`` loses its article); invisible characters out of runs (above)
    if not query.isascii():
        query = OPTIONAL_MARKS.sub("", query)
        if FORMAT_CHARS.search(query) is not None:
            query = _IN_RUN_FORMAT.sub("", query)
    found: list[str] = []
    for phrase in _QUOTED.findall(query):
        cleaned = unmarked(" ".join(phrase.split()))  # ("\u0301abc": abc)
        if _WORD.search(cleaned):
            found.append(f'"{cleaned}"')
    rest = _QUOTED.sub(" ", query)
    shouted = _shouted(rest)
    # (a capital names nothing where every word has one: ``Tôi Ở Đâu``, where am I?)
    blind = shouted or _titled(rest)
    # (ambiguous stop words, ``question_language``: ``min`` in a Swedish question, not an
    # English one; Vietnamese ``di`` kept in a Vietnamese question)
    shown = shown_stops(*_question_words(rest, blind))
    in_japanese = japanese(rest)
    position = 0
    syllables_found: list[str] = []  # (after the rest: what room the cap leaves)
    for run in _spaceless_runs(rest):
        found.extend(_words(rest[position : run.start()], shouted, blind, shown))
        if _is_cjk(run):
            found.extend(_cjk_keywords(run.group(0), in_japanese))
        else:
            chunk_keywords, pieces = _thai_keywords(run)
            found.extend(chunk_keywords)
            syllables_found.extend(pieces)
        position = run.end()
    found.extend(_words(rest[position:], shouted, blind, shown))
    unique = list(dict.fromkeys(found + syllables_found))
    return unique[:MAX_KEYWORDS]


def _question_words(text: str, blind: bool) -> tuple[list[str], set[str]]:
    """The lower-cased words of ``text`` for ``shown_stops``, with the elided head of
    each (``dell'anno``: ``dell``, an ambiguous Italian stop word); and those written
    with a capital inside a sentence, names (``Hà Nội`` in ``the phở in Hà Nội``), or
    opening it before a name's syllable (``_name_follows``: ``Ai Cập ở đâu?``), unless
    capitals say nothing in the question (``blind``: in capitals or title case)."""
    words = []
    names = set()
    for token in _TOKEN.finditer(text):
        written = token.group().strip(_AROUND)
        word = _plain(_lowered(written))
        words.append(word)
        if "'" in word:
            words.append(word.partition("'")[0])
        if not blind and written != written.lower():
            at = token.start() + token.group().index(written[:1])
            if not _opens_sentence(text, at) or _name_follows(text, at + len(written)):
                names.add(word)
    return words, names


def _spaceless_runs(text: str) -> list[re.Match[str]]:
    runs = list(CJK_ONLY_RUN.finditer(text)) + list(_SPACELESS_LETTERS.finditer(text))
    return sorted(runs, key=lambda m: m.start())


def _is_cjk(run: re.Match[str]) -> bool:
    return CJK_ONLY_RUN.fullmatch(run.group(0)) is not None


def _shouted(query: str) -> bool:
    """Whether ``query`` is written in capitals throughout (``WHAT IS THE PLAN``): more
    than one word in capitals and no small letter (``AI技术是什么`` is one acronym)."""
    if any(char.islower() for char in query) or not any(char.isupper() for char in query):
        return False  # (RE2 walked 10 KB of Chinese in up to 170 ms, to find no capital)
    return sum(1 for word in _WORD.finditer(query) if word.group(0).isupper()) > 1


def _words(text: str, shouted: bool, blind: bool, shown: Shown) -> list[str]:
    """Lower-cased words of a spaced script, minus stop words (the ambiguous ones the
    question ``shown`` to be, not those it writes as words: ``question_language``) and
    single letters; a word in capitals is an acronym (``AI``, ``US``), never a stop word,
    unless the whole query is in capitals (``shouted``); an ambiguous one capitalized
    inside a sentence is a name (``Kapan Kim dan Yang datang?``, ``Wohin fließt die
    Seine?``), never a stop word, and so is a Vietnamese one in a Vietnamese question
    (``shown.named``: ``Ai đi Ai Cập?`` seeks ``Ai Cập``, not who), also opening the
    sentence before a name's syllable (``Ai Cập ở đâu?``); unless capitals say nothing
    in the question (``blind``: in capitals or title case, ``Tôi Ở Đâu``)."""
    out: list[str] = []
    text = _ARMENIAN_MARKS.sub("", text)
    numbers = dict(grouped_numbers(text))
    inside = 0  # (where the grouped number a word is part of ends: ``85,000`` is one)
    for match in _WORD.finditer(text):
        written = match.group(0)
        if match.start() < inside:
            continue
        if match.start() in numbers:
            out.append(numbers[match.start()])
            inside = match.start() + len(numbers[match.start()])
            continue
        word = _lowered(written)
        acronym = not shouted and written.isupper()
        stops, kept = shown.stops, shown.kept
        capital = bool(stops or shown.named) and not blind and written != written.lower()
        if capital and not _opens_sentence(text, match.start()):
            stops, kept = frozenset(), kept | shown.named  # (a name: ``Ai Cập``)
        elif capital and shown.named and _name_follows(text, match.end()):
            kept = kept | shown.named  # (a name opening the sentence: ``Ai Cập ở đâu?``)
        plain = _plain(word)
        if len(plain) < 2 or (_stop_word(plain, stops, kept) and not acronym):
            continue
        word = without_article(word)  # (Arabic: ``البيانات`` finds ``بيانات`` too)
        word = without_the(word)  # (Hebrew: ``הנתונים`` finds ``נתונים`` too)
        word = without_plural(word)  # (Persian: ``داده‌ها`` finds ``داده`` too)
        # "user's" -> "user"; "l'école" -> "école"; "dell'anno" -> "anno"; not in Cyrillic,
        # whose apostrophe is a letter of the word (Ukrainian ``п'ять``: ``ять`` was also
        # ``дев'ять``), sought whole as search finds it (the phrase of its two pieces)
        if "'" in word and not _CYRILLIC.match(word, max(0, word.index("'") - 1)):
            head, _, tail = word.partition("'")
            elided = len(tail) > len(head) if len(head) <= 2 else _dropped(head, stops, kept)
            word = tail if elided else head
            if _dropped(word, stops, kept):
                continue
        out.append(word)
    return out


def _dropped(word: str, stops: frozenset[str], kept: frozenset[str]) -> bool:
    """Whether ``word`` is a single letter or a stop word, as search reads it: without
    the invisible characters it may hold (``wh\\u00adat``, ``th\\u200be``)."""
    plain = _plain(word)
    return len(plain) < 2 or _stop_word(plain, stops, kept)


def _stop_word(plain: str, stops: frozenset[str], kept: frozenset[str]) -> bool:
    """Whether ``plain`` is a stop word, an ambiguous one among ``stops``, unless the
    question writes it as a word (``kept``: Vietnamese ``di``)."""
    return is_stop(plain, stops) and plain not in kept


def _plain(word: str) -> str:
    return FORMAT_RUNS.sub("", word) if FORMAT_CHARS.search(word) else word


def _lowered(written: str) -> str:
    """``written`` in small letters, its apostrophes one; the Turkish dotted capital
    ``İ`` is ``i`` (``lower`` made it ``i`` and a combining dot: a word with a mark,
    looked up as written where another form was wanted, ``word_stems``)."""
    return written.replace("İ", "i").lower().replace("’", "'").replace("ʼ", "'")


def _titled(text: str) -> bool:
    """Whether every word of ``text`` written with letters that have capitals opens with
    one, and there are more than two (``Tôi Ở Đâu``; two, ``Ai Cập``, ``Hà Nội``, are as
    likely a name)."""
    words = [word for word in text.split() if word.lower() != word.upper()]
    if len(words) < 3:
        return False
    return all(next(c for c in word if c.lower() != c.upper()).isupper() for word in words)


def _name_follows(text: str, end: int) -> bool:
    """Whether the word ending at ``end`` is followed, after spaces alone, by a
    capitalized Vietnamese syllable (``Cập`` of ``Ai Cập ở đâu?``): a name of several
    syllables may open a sentence, its first a stop word elsewhere (``ai``, who)."""
    following = _FOLLOWING.match(text, end)
    if following is None:
        return False
    word = following.group(1).rstrip(_AROUND)
    return word[:1].isupper() and syllable(_lowered(word))


def _opens_sentence(text: str, at: int) -> bool:
    while at > 0 and text[at - 1] in _OPENING:
        at -= 1
    return at == 0 or text[at - 1] in _SENTENCE_ENDS


def _cjk_keywords(run: str, in_japanese: bool) -> list[str]:
    """A Korean word without its particle, or a Chinese or Japanese run's keywords."""
    if _HANGUL.fullmatch(run):
        return _korean_word(run)
    return han_keywords(run, in_japanese)


def _korean_word(word: str) -> list[str]:
    """A Korean word without its particle (``데이터베이스를``: ``데이터베이스``), and as
    written too where the particle may be the noun's own last syllable (``_KO_NOUN_ENDINGS``:
    ``고양이`` gives ``고양`` and ``고양이``, ranking the cat's notes above the city's)."""
    whole = word
    for particle in _KO_PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= 2:
            word = word[: -len(particle)]
            break
    if len(word) < 2 or word in _STOP_KO:
        return []
    if word != whole and whole[len(word) :] in _KO_NOUN_ENDINGS:
        return [word, whole]
    verb = _KO_VERB.match(word)  # (``결정했나요``: ``결정`` too, which a note may say alone)
    if verb is not None and verb.group(1) not in _STOP_KO:
        return [verb.group(1), word]
    return [word]


def _thai_keywords(run: re.Match[str]) -> tuple[list[str], list[str]]:
    """A Thai-like chunk without its stop words, and without the question words glued
    to its end or standing between its syllables (``question_words``: the parts around
    them), then a long part's windows (``_windows``), a short one's pairs
    (``short_chunks``); and apart, its syllables but bare letters (``_syllables``)."""
    chunk = unmarked(run.group(0))
    if _stop(chunk) or len(chunk) < 2:
        return [], []
    out = [chunk]
    parts = without_question_words(without_endings(chunk))
    out.extend(part for part in parts if part != chunk and _sought(part))
    sought: list[str] = []
    for part in parts:
        pieces, apart = _syllables(part)
        letters = _seen_characters(part)
        if len(letters) > 6:
            out.extend(_windows(letters))
        else:  # (too short for windows of its own: its pairs, ``short_chunks``)
            out.extend(pairs(part, apart))
        sought.extend(pieces)
    return out, sought


def _syllables(stem: str) -> tuple[list[str], set[int]]:
    """The syllables of ``stem`` sought alone (``syllables``; no bare letter, no stop
    word): a word its pairs and windows reach only in part (``แมว`` of ``แมวกิน``:
    ``แม`` and ``มว`` also found ``แม่ชอบดูมวย``), only glued to its neighbours
    (``အိပ်`` of ``ကြောင်ဘယ်မှာအိပ်``, where does the cat sleep, in a note saying
    ``ကြောင်`` and ``အိပ်`` apart), or in none (``ခွေး``, dog, of ``ခွေးကိုက်``: one
    letter and its vowel); and where (in its ``run_units``) a pair would join two
    syllables that say it all, each of two letters or more or a stop word (``วกิ`` of
    ``แมวกิน`` found ``แล้วกิน``; ``ก็ก`` of ``ก็กลับ``, ``ก็กิน``). (Around a syllable of
    one letter, which may be a piece of a longer word, ``วิ`` of ``วิทยุ``, the pairs
    stay.)"""
    pieces = syllables(stem)
    words = ["".join(piece) for piece in pieces]
    says_it = [_letters(word) >= 2 or _stop(word) or word in ENDINGS for word in words]
    apart: set[int] = set()
    at = -1
    for number, piece in enumerate(pieces[:-1]):
        at += len(piece)
        if says_it[number] and says_it[number + 1]:
            apart.add(at)
    return [word for word in words if word != stem and _sought(word)], apart


def _letters(word: str) -> int:
    return sum(not continues(char) for char in word)


def _sought(word: str) -> bool:
    """Whether a part or a syllable of a chunk is a keyword alone: no bare letter
    (``syllables.bare``), stop word or question word."""
    return not bare(word) and not _stop(word) and word not in ENDINGS


def _stop(word: str) -> bool:
    return word in _STOP_TH or word in OTHER_STOPS


def _windows(letters: list[str]) -> list[str]:
    """Windows of 4 characters as seen (a consonant with its marks: a window of code
    points began with a vowel sign, and the heading naming the keywords showed ``ินส้``),
    one every 2, the last ending where the stem ends (``ကြောင်ဘယ်မှာအိပ်``: its
    ``အိပ်``, sleep, was in no window but the one glued to the question word ``လဲ``); a
    Myanmar window never starts on the consonant closing a syllable (``ယ်မှာအိပ်``: half
    of ``ဘယ်``)."""
    starts = list(range(0, len(letters) - 3, 2))
    if starts[-1] + 4 < len(letters):
        starts.append(len(letters) - 4)
    out = []
    for start in starts:
        end = start + 4
        while start < end - 2 and closes(letters[start]):
            start += 1
        out.append("".join(letters[start:end]))
    return out


def _seen_characters(text: str) -> list[str]:
    """``text`` cut where a character as seen ends (``graphemes.continues``), a consonant
    stacked below another (Khmer's coeng, Myanmar's virama) kept with it, as the index
    pairs them (``run_units``): a window of ``តម្លៃមាសថ្ងៃនេះ`` began inside ``ម្លៃ``
    and ended on ``ថ្``, half of ``ថ្ងៃ``."""
    letters: list[str] = []
    for char in text:
        if letters and (continues(char) or letters[-1][-1] in _STACKING):
            letters[-1] += char
        else:
            letters.append(char)
    return letters


def query_words(keywords: list[str]) -> list[str]:
    """``keywords`` as the query wrote them: without the pieces cut from a longer
    keyword of a script written without spaces (its bigrams, a Thai chunk's windows),
    which search needs to rank a partial match but mean nothing to a reader
    (``用户喜欢, 用户, 户喜, 喜欢``)."""
    spaceless = [k for k in keywords if _spaceless(k)]
    return [
        keyword
        for keyword in keywords
        if keyword not in spaceless
        or not any(keyword in other and keyword != other for other in spaceless)
    ]


def _spaceless(keyword: str) -> bool:
    return (
        CJK_ONLY_RUN.fullmatch(keyword) is not None or SPACELESS_RUN.fullmatch(keyword) is not None
    )
