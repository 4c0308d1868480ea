"""The question words of a Thai, Lao, Khmer or Myanmar question, taken off the chunk
they are glued to, for recall's keywords (``keywords``).

A question glues its question word to the words it asks about: ``ประชุมเมื่อไหร่`` (when
is the meeting?), ``ကြောင်ဘာစားလဲ`` (what does the cat eat?). Left on, the word is in
the chunk's pairs and windows, and a note holding it (``ဘာစား``, "eat what", in a note
about something else) ranked with or above the one about the cat. Two rules:

- what ends a question (``ENDINGS``: question words, question particles, polite words) is
  taken off its end, twice at most (``ราคาเท่าไหร่ครับ``), never down to nothing;
- a question word (``_ANYWHERE``: only those that are never part of another word as
  written) is taken out wherever it stands between two syllables, the chunk cut there:
  ``ใคร|กินขนม``, ``ကြောင်|ဘာ|စား``. Not inside a character as the index pairs them
  (``ကမ္ဘာ``, world, holds ``ဘာ`` under a stack), nor where the letter after it closes
  its syllable (``ណាស់``, very), nor where it is part of a word (``ဘာသာ``, language;
  ``သဘာဝ``, nature; ``ဒီဇင်ဘာ``, December: ``_WORDS_HOLDING_ONE``).
"""

from __future__ import annotations

import itertools

from indexer.index.text import run_units
from indexer.jobs.syllables import LEADING_VOWELS, half

# Thai, Lao, Myanmar, Khmer. (Thai ไหม also means silk, Lao ໃສ clear, Khmer ណា is the
# end of ករុណា: at the end only.)
_ENDING_TEXT = """ไหม มั้ย หรือเปล่า หรือไม่ เท่าไหร่ เท่าไร อย่างไร ยังไง อะไร ที่ไหน ไหน บ้าง
    เมื่อไร เมื่อไหร่ ทำไม ใคร ครับ ค่ะ คะ นะ จ้ะ จ๊ะ
    ບໍ ບໍ່ ແມ່ນບໍ ໄດ້ບໍ ຫຍັງ ເປັນຫຍັງ ຢູ່ໃສ ໃສ ເທົ່າໃດ ແນວໃດ ເມື່ອໃດ ຕອນໃດ ໃຜ ເດີ ແດ່ ນໍ
    လား သလား ပါသလား လဲ သလဲ နည်း သနည်း ရှင် ခင်ဗျာ နော်
    ទេ ឬទេ ដែរឬទេ ទេ៎ នៅឯណា ឯណា ណា ពេលណា នរណា អ្នកណា ប៉ុន្មាន យ៉ាងម៉េច ម៉េច អ្វី ហេតុអ្វី
    បាទ ចាស"""
ENDINGS = tuple(sorted(set(_ENDING_TEXT.split()), key=len, reverse=True))
_ANYWHERE_TEXT = """อะไร ที่ไหน ไหน เมื่อไร เมื่อไหร่ ทำไม อย่างไร ยังไง ใคร เท่าไหร่ เท่าไร กี่
    ຫຍັງ ເປັນຫຍັງ ໃຜ ເມື່ອໃດ ຕອນໃດ ແນວໃດ ເທົ່າໃດ
    ဘာ ဘယ် ဘယ်သူ ဘယ်သူ့ ဘယ်မှာ ဘယ်တော့ ဘယ်အချိန် ဘယ်လို ဘယ်လောက် ဘယ်နှစ် ဘယ်က ဘယ်ကို
    ဘယ်ဟာ ဘာကြောင့် ဘာလို့ ဘာဖြစ်လို့
    អ្វី ហេតុអ្វី នរណា អ្នកណា ពេលណា យ៉ាងម៉េច យ៉ាងដូចម្តេច ប៉ុន្មាន"""
# (by their first letter, the longest first)
_ANYWHERE: dict[str, list[str]] = {}
for _word in sorted(set(_ANYWHERE_TEXT.split()), key=len, reverse=True):
    _ANYWHERE.setdefault(_word[0], []).append(_word)
# Common words holding a question word as written: language or religion, meditation, the
# left side, the left hand; nature, and the months September to December (``ဒီဇင်ဘာလ``:
# ``ဘာ`` cut out of it left ``ဒီဇင်`` and ``လ``)
_WORDS_HOLDING_ONE = "ဘာသာ ဘာဝနာ ဘယ်ဘက် ဘယ်ဖက် ဘယ်လက် သဘာဝ စက်တင်ဘာ အောက်တိုဘာ နိုဝင်ဘာ ဒီဇင်ဘာ".split()
# (each with where in it a question word starts)
_HOLDING = [
    (word, inside)
    for word in _WORDS_HOLDING_ONE
    for inside in range(len(word))
    if word.startswith(tuple(_ANYWHERE.get(word[inside], ())), inside)
]
# What goes on a syllable begun before it: Thai and Lao vowels written after a consonant
_GOES_ON = frozenset("ะาำๅະາຳ")


def without_endings(chunk: str) -> str:
    """``chunk`` without the question and politeness words glued to its end (twice at
    most: ``ราคาเท่าไหร่ครับ``), never down to nothing."""
    for _ in range(2):
        ending = next((e for e in ENDINGS if chunk.endswith(e) and chunk != e), None)
        if ending is None:
            break
        chunk = chunk[: -len(ending)]
    return chunk


def without_question_words(stem: str) -> list[str]:
    """``stem`` cut where a question word stands alone between syllables (see the module),
    without it: the parts around it, none empty (``[]`` when it is one)."""
    units = run_units(stem)
    offsets = list(itertools.accumulate(map(len, units), initial=0))
    unit_at = {offset: number for number, offset in enumerate(offsets)}
    parts: list[str] = []
    start = at = 0
    while at < len(units):
        end = _question_word(stem, units, offsets[at], unit_at)
        if end is None:
            at += 1
            continue
        parts.append(stem[offsets[start] : offsets[at]])
        start = at = unit_at[end]
    parts.append(stem[offsets[start] :])
    return [part for part in parts if part]


def _question_word(stem: str, units: list[str], offset: int, unit_at: dict[int, int]) -> int | None:
    """Where a question word standing alone at ``offset`` of ``stem`` ends (``None``:
    none there); ``unit_at`` maps where each of its ``units`` starts to its number."""
    candidates = _ANYWHERE.get(stem[offset], ())
    at = unit_at[offset]
    if not candidates or (at and units[at - 1] in LEADING_VOWELS):
        return None
    if any(inside <= offset and stem.startswith(w, offset - inside) for w, inside in _HOLDING):
        return None
    for word in candidates:
        end = offset + len(word)
        if stem.startswith(word, offset) and _may_start(units, unit_at.get(end)):
            return end
    return None


def _may_start(units: list[str], at: int | None) -> bool:
    """Whether a syllable may begin at unit ``at`` (``None``: inside one; past the last:
    the stem's end): not on a closing consonant (Myanmar's ``င်``, Khmer's ``ស់``) nor a
    vowel going on from the one before."""
    if at is None or at == len(units):
        return at is not None
    return not (half(units[at]) or units[at][0] in _GOES_ON)
