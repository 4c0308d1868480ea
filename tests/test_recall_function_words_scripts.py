"""Recall's stop words of the spaced scripts other than Latin, Cyrillic and Greek, and
Swahili's (``indexer.jobs.stop_words_scripts``): the common function words a first pass
left out (postpositions, case forms of the pronouns, conjunctions, auxiliaries), matched
as search reads them (Arabic and Persian points, Persian's ZWNJ). Where a script is
shared (Arabic, Persian, Urdu; Hindi, Marathi, Nepali), a function word of one that is a
content word of another is ambiguous: a stop word only where the question shows its
language (Persian ``جدا``, separate; Hindi ``मलाई``, cream)."""

from __future__ import annotations

import pytest

from indexer.jobs.keywords import extract_keywords

# (question, its keywords): each kept the function word named beside it before.
FUNCTION_WORDS = [
    ("Kitabu kiko juu ya meza?", ["kitabu", "kiko", "meza"]),  # sw: juu
    ("বিড়ালটা কি টেবিলের নিচে ঘুমায়?", ["বিড়ালটা", "টেবিলের", "ঘুমায়"]),  # bn: নিচে
    ("کیا بلی میز کے نیچے سوتی ہے؟", ["بلی", "میز", "سوتی"]),  # ur: نیچے
    ("பூனை மேசைக்கு கீழ் தூங்குகிறதா?", ["பூனை", "மேசைக்கு", "தூங்குகிறதா"]),  # ta: கீழ்
    ("పిల్లి బల్ల కింద నిద్రపోతుందా?", ["పిల్లి", "బల్ల", "నిద్రపోతుందా"]),  # te: కింద
    ("क्या बिल्ली मेज़ के नीचे सोती है?", ["बिल्ली", "मेज़", "सोती"]),  # hi: नीचे
    ("मांजर नंतर कुठे जाते?", ["मांजर", "जाते"]),  # mr: नंतर
    ("बिरालो टेबल माथि सुत्छ?", ["बिरालो", "टेबल", "सुत्छ"]),  # ne: माथि
    ("კატა ძალიან ბევრს სძინავს?", ["კატა", "ბევრს", "სძინავს"]),  # ka: ძალიან
    ("Կատուն շատ է քնում?", ["կատուն", "քնում"]),  # hy: շատ
    ("ድመቷ አሁን የት ነች?", ["ድመቷ"]),  # am: አሁን, ነች
    ("පූසා දැන් කොහේද?", ["පූසා"]),  # si: දැන්
    ("هل القطة تَحْتَ الطاولة؟", ["قطة", "طاولة"]),  # ar: تحت, written with its points
    ("החתול ישן מתחת לשולחן?", ["חתול", "ישן", "לשולחן"]),  # he: מתחת
    ("گربه زیرِ میز می‌خوابد؟", ["گربه", "میز", "می\u200cخوابد"]),  # fa: زیر, with its kasra
    ("چرا کامپیوتر روشن نمی‌شود؟", ["کامپیوتر", "روشن"]),  # fa: نمی‌شود, with a ZWNJ
    ("هل القطة نائمة جدا؟", ["قطة", "نائمة"]),  # ar: جدا (very), Arabic shown by هل
]


@pytest.mark.parametrize(("query", "expected"), FUNCTION_WORDS)
def test_a_common_function_word_is_no_keyword(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): each kept the Urdu postposition or auxiliary beside it before
URDU = [
    ("علی نے کتاب پڑھی", ["علی", "کتاب", "پڑھی"]),  # نے, the ergative: Ali read the book
    ("میں نے کھانا کب کھایا؟", ["کھانا", "کھایا"]),  # نے
    ("وہ کہاں تھیں؟", []),  # تھیں: where were they?
    ("کیا بارش ہوگی؟", ["بارش"]),  # ہوگی: will it rain?
    ("وہ کبھی کہیں نہیں گیا", []),  # کبھی, کہیں: he never went anywhere
    ("بلی میز کے سامنے سوتی ہے", ["بلی", "میز", "سوتی"]),  # سامنے, in front of
    ("کیا میں یہ کتاب پڑھ سکتا ہوں؟", ["کتاب", "پڑھ"]),  # سکتا, can
]


@pytest.mark.parametrize(("query", "expected"), URDU)
def test_an_urdu_postposition_or_auxiliary_is_no_keyword(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): a word the question asks about stays, though it is a function
# word of another language of its script, or spelt as one.
CONTENT_WORDS = [
    ("Hata nerede çıktı?", ["hata", "çıktı"]),  # tr: error (Swahili "even")
    ("Basi la shule liko wapi?", ["basi", "shule", "liko"]),  # sw: a bus (also "so")
    ("آج ہوا بہت تیز ہے؟", ["آج", "ہوا", "تیز"]),  # ur: the wind (also "happened")
    ("ماں بہت کم سوتی ہے", ["ماں", "کم", "سوتی"]),  # ur: little (Arabic "how many")
    ("این دو پرونده جدا هستند؟", ["دو", "پرونده", "جدا"]),  # fa: separate (Arabic "very")
    ("کم نمک است؟", ["کم", "نمک"]),  # fa: little
    ("मलाई कहाँ रखी है?", ["मलाई", "रखी"]),  # hi: cream (Nepali "to me")
    ("क्या वह रोज़ घर आता है?", ["रोज़", "घर", "आता"]),  # hi: comes (Marathi "now")
    ("ये वर कौन है?", ["वर"]),  # hi: a groom (Marathi "on")
]


@pytest.mark.parametrize(("query", "expected"), CONTENT_WORDS)
def test_a_content_word_of_the_question_stays(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): the ambiguous words are stop words in their own language.
SHOWN = [
    ("Hata hivyo, paka yuko wapi?", ["paka", "yuko"]),  # sw: hata
    ("मांजर आता कुठे आहे?", ["मांजर"]),  # mr: आता
    ("مرا کجا بردند؟", ["بردند"]),  # fa: مرا
]


@pytest.mark.parametrize(("query", "expected"), SHOWN)
def test_an_ambiguous_word_is_a_stop_word_in_its_language(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): Marathi's का, की, या, तो, ही and Nepali's के, को, कि are
# Hindi's stop words too; listed in their own lists they show their language, whose
# ambiguous words go (each kept the word named beside it before, read as Hindi), as do
# the function words the lists left out (Nepali कस्तो, how)
SISTERS_SHOWN = [
    ("तो आता घरी आहे का?", ["घरी"]),  # mr: आता (now)
    ("ही गाडी आता येथे आहे का?", ["गाडी"]),  # mr: आता (ही, this; येथे, here)
    ("आज मौसम कस्तो छ?", ["आज", "मौसम"]),  # ne: कस्तो (how)
]


@pytest.mark.parametrize(("query", "expected"), SISTERS_SHOWN)
def test_a_sister_language_s_own_function_words_show_it(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): a question tied between sister languages (sharing a script)
# drops a word only where each of them stops it, since the ambiguous words of one are
# content words of the other. Persian تب was dropped before (the tie went to Urdu,
# whose word it is), كي kept; the Hindi questions tie now that Marathi lists का, की.
SISTER_TIES = [
    ("تب یا سرفه؟", ["تب", "سرفه"]),  # fa: fever (Urdu تب, then), tied on یا (or)
    ("देरी का कारण", ["देरी", "कारण"]),  # hi: the reason (Marathi कारण, because)
    ("वर की तलाश", ["वर", "तलाश"]),  # hi: a groom (Marathi वर, on)
    ("كي آمد یا رفت؟", ["آمد", "رفت"]),  # fa or ur: کی typed كي, a stop word of both
]


@pytest.mark.parametrize(("query", "expected"), SISTER_TIES)
def test_a_tie_between_sister_languages_drops_what_both_stop(
    query: str, expected: list[str]
) -> None:
    assert extract_keywords(query) == expected
