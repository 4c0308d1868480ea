"""Keywords of a short Thai, Lao, Khmer or Myanmar chunk, and the stop words in Lao,
Khmer and Myanmar (Thai's are in ``keywords``: ``_STOP_TH``; the question words of all
four in ``question_words``).

A chunk of six characters as seen or fewer has no 4-character windows, so recall looked
for it whole only: ``ရန်ကုန်မိုး`` (Yangon rain) found no note saying ``ရန်ကုန်မှာ
မိုးရွာတယ်``, ``ฝนตก`` none saying ``ฝนจะตก``. Its pairs of characters, as the index
pairs them (``run_units``), rank a partial match, as a Chinese word's bigrams do.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection

from indexer.index.text import run_units
from indexer.jobs.syllables import closes
from shared.graphemes import continues

# Their grammar words, pronouns and question words (Thai's are ``keywords._STOP_TH``): never
# a keyword alone, a chunk or a syllable of one (``syllables``: ການ, ការ, တယ်; particles of
# one letter and its vowel: ກໍ, တော့, ဖို့, ថា). Lao, then Myanmar, then Khmer.
OTHER_STOPS = frozenset(
    """ແລະ ຂອງ ໃນ ທີ່ ແມ່ນ ເປັນ ມີ ໄດ້ ບໍ່ ຈະ ກັບ ໃຫ້ ວ່າ ແຕ່ ຫຼື ນີ້ ນັ້ນ ຂ້ອຍ ເຮົາ ເຈົ້າ ໃດ
    ເມື່ອ ຢູ່ ການ ຄວາມ ກໍ ກໍ່
    တယ် သည် ပါ ကို က မှာ နဲ့ နှင့် ရဲ့ တွေ များ ဘယ် ဘာ ဒီ အဲဒီ ကျွန်တော် ကျွန် ကျွန်မ ငါ သူ
    မင်း ခဲ့ မယ် ပြီ လည်း ဖြစ် ရှိ တော့ ရော ကော ပေါ့ သေး မှ ဖို့ သို့ လို့ ကြ ထဲ တို့
    និង នៃ ក្នុង ជា បាន ដែល នៅ ពី ទៅ ការ ខ្ញុំ យើង គាត់ វា នេះ នោះ ហើយ ឬ តែ មាន ណា ពេលណា
    ដើម្បី សម្រាប់ ក៏ ថា គឺ""".split()
)


def pairs(stem: str, apart: Collection[int] = ()) -> list[str]:
    """The bigrams (as the index pairs characters) of a chunk of four characters as seen
    or more (``แมว``, cat, is one word: its pairs found ``แมลง``), but those starting at
    the places ``apart`` (of its ``run_units``); a Myanmar pair never starts on the
    consonant closing a syllable (``န်ကု`` of ``ရန်ကုန်``: half of two;
    ``syllables.closes``)."""
    units = run_units(stem)
    if len(units) < 3 or sum(not continues(char) for char in stem) < 4:
        return []  # (two units are one bigram: the chunk itself)
    return [
        a + b
        for at, (a, b) in enumerate(itertools.pairwise(units))
        if at not in apart and not closes(a)
    ]
