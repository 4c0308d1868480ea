"""Keywords of a short Thai, Lao, Khmer or Myanmar chunk, and the question words glued
to the end of one in Lao, Khmer and Myanmar (Thai's are in ``keywords._ENDINGS``).

A chunk of six characters as seen or fewer has no 4-character windows, so recall looked
for it whole only: ``ရန်ကုန်မိုး`` (Yangon rain) found no note saying ``ရန်ကုန်မှာ
မိုးရွာတယ်``, ``ฝนตก`` none saying ``ฝนจะตก``. Its pairs of characters, as the index
pairs them (``run_units``), rank a partial match, as a Chinese word's bigrams do.
"""

from __future__ import annotations

import itertools

from indexer.index.text import run_units
from shared.graphemes import continues

# Glued to a question's last word: without them, a short question has a stem to pair
# (``ຝົນຕົກບໍ``, rain?, is ``ຝົນຕົກ``). Lao, then Myanmar, then Khmer.
OTHER_ENDINGS = """ບໍ ບໍ່ ແມ່ນບໍ ໄດ້ບໍ ຫຍັງ ຢູ່ໃສ ໃສ ເທົ່າໃດ ແນວໃດ ເດີ ແດ່ ນໍ
    လား သလား ပါသလား လဲ သလဲ နည်း ရှင် ခင်ဗျာ နော်
    ទេ ឬទេ ដែរឬទេ ទេ៎ នៅឯណា ឯណា ប៉ុន្មាន យ៉ាងម៉េច អ្វី បាទ ចាស""".split()
_ASAT = "\u103a"  # Myanmar: the consonant closing a syllable


def pairs(stem: str) -> list[str]:
    """The bigrams (as the index pairs characters) of a chunk of four characters as seen
    or more (``แมว``, cat, is one word: its pairs found ``แมลง``); a Myanmar pair never
    starts on the consonant closing a syllable (``န်ကု`` of ``ရန်ကုန်``: half of two)."""
    units = run_units(stem)
    if len(units) < 3 or sum(not continues(char) for char in stem) < 4:
        return []  # (two units are one bigram: the chunk itself)
    return [a + b for a, b in itertools.pairwise(units) if _ASAT not in a]
