"""Arabic-script stop words typed on a sister language's keyboard
(``indexer.jobs.stop_word_variants``): Arabic with Persian ی and ک, Persian and Urdu with
Arabic ي, ى and ك, are stop words where the question shows their language; the same
spellings are kept where they are the other language's words (Persian ``علی``, Ali;
``کیف``, a bag), and Arabic's own ي and ى, and hamza, stay apart (``علي``, Ali;
``امام``, an imam)."""

from __future__ import annotations

import pytest

from indexer.index.service import NoteIndex
from indexer.jobs.keywords import extract_keywords
from indexer.jobs.recall import Recall
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace

# (question, its keywords): each kept the function word typed so before
TYPED = [
    ("هل القطة علی الطاولة؟", ["قطة", "طاولة"]),  # ar: على with Persian ی
    ("ماذا قال المدير فی الاجتماع؟", ["مدير", "اجتماع"]),  # ar: في
    ("هل ذهبت الی المدرسة؟", ["ذهبت", "مدرسة"]),  # ar: الى
    ("هل هذه السیارة لک؟", ["سیارة"]),  # ar: لك with Persian ک
    ("آن مرد كي آمد؟", ["مرد", "آمد"]),  # fa: کی (when) with Arabic ك and ي
    ("این کتاب برای کيست؟", ["کتاب"]),  # fa: کیست with Arabic ي
    ("چه كسي اين را نوشت؟", ["نوشت"]),  # fa: کسی
    ("كيا بلي ميز كے نيچے سوتي ہے؟", ["بلي", "ميز", "سوتي"]),  # ur: کیا, کے, نیچے
    ("يه کس کي کتاب ہے؟", ["کتاب"]),  # ur: کی, and یہ with Arabic ه
    ("وه کتاب کہاں ہے؟", ["کتاب"]),  # ur: وہ with Arabic ه
    ("بلی میز کے نیچي سوتی ہے؟", ["بلی", "میز", "سوتی"]),  # ur: نیچے with Arabic ي for ے
    ("وہ مجھ سی کیا چاہتا ہے؟", ["مجھ", "چاہتا"]),  # ur: سے with Persian ی for ے
    ("آن مرد كى آمد؟", ["مرد", "آمد"]),  # fa: with Arabic ى
]


@pytest.mark.parametrize(("query", "expected"), TYPED)
def test_a_function_word_typed_on_a_sister_keyboard_is_no_keyword(
    query: str, expected: list[str]
) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): the same spellings where they are words, and Arabic's own
# letters, which its words mix (each kept before too; کجاست, where is, was a keyword)
WORDS = [
    ("علی کجا است؟", ["علی"]),  # fa: Ali (Arabic على, on)
    ("خانه علی کجاست؟", ["خانه", "علی"]),  # (کجاست, where is: a stop word now)
    ("کیف من کجاست؟", ["کیف"]),  # fa: my bag (Arabic كيف, how)
    ("کیف قرمز", ["کیف", "قرمز"]),  # (no language shown)
    ("کان طلا کجاست؟", ["کان", "طلا"]),  # fa: a gold mine (Arabic كان, was)
    ("سی سال گذشت و او هنوز اینجاست", ["سی", "سال", "گذشت", "اینجاست"]),  # fa: thirty (سے)
    ("ماں بہت کم سوتی ہے", ["ماں", "کم", "سوتی"]),  # ur: little (Arabic كم, how many)
    ("متى الاجتماع مع علي؟", ["اجتماع", "علي"]),  # ar: Ali (على, on: ى and ي apart)
    ("من هو امام المسجد؟", ["امام", "مسجد"]),  # ar: an imam (أمام, before)
]


@pytest.mark.parametrize(("query", "expected"), WORDS)
def test_the_same_spelling_stays_where_it_is_a_word(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): Urdu and Persian typed wholly on an Arabic keyboard (ي, ك, ه
# for ی, ک, ہ and ھ; a yeh for ے, ن for ں) show their language by those spellings alone;
# each kept them before (``هي``, Urdu's ہے typed so, is Arabic's she)
ARABIC_KEYBOARD = [
    ("يه كس كي كتاب هي؟", ["كتاب"]),  # ur: یہ کس کی کتاب ہے؟ whose book is this?
    ("يه كس كى كتاب هى؟", ["كتاب"]),  # (with ى)
    ("وه كب آيا تها؟", ["آيا"]),  # ur: وہ کب آیا تھا؟ when did he come?
    ("ميري بلي كهان سوتي هي؟", ["بلي", "سوتي"]),  # ur: میری بلی کہاں سوتی ہے؟
    ("تم كهان رهتي هو؟", ["رهتي"]),  # ur: تم کہاں رہتے ہو؟ (هو: Arabic's he)
    ("اين كتاب براي كيست؟", ["كتاب"]),  # fa: این کتاب برای کیست؟ (اين: Arabic's where)
    ("اين كار را كي كردي؟", ["كار", "كردي"]),  # fa: کی, when
]


@pytest.mark.parametrize(("query", "expected"), ARABIC_KEYBOARD)
def test_a_question_typed_wholly_on_an_arabic_keyboard_shows_its_language(
    query: str, expected: list[str]
) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): Arabic questions whose words Persian and Urdu also type so
# stay Arabic, as before (each the same before)
STILL_ARABIC = [
    ("ذهبت إلى السوق كي أشتري الخبز", ["ذهبت", "سوق", "كي", "أشتري", "خبز"]),  # كي, so that
    ("هو كي يكون هنا", ["كي"]),  # (هو, he; هنا, here: as many Arabic as typed Urdu)
    ("يا ولي العهد", ["يا", "ولي", "عهد"]),  # (the article: Arabic's; ولی, Persian but)
    ("من هو ولي العهد؟", ["ولي", "عهد"]),
    ("هل هي في البيت؟", ["بيت"]),
    ("كيف حالك يا صديقي؟", ["حالك", "يا", "صديقي"]),
    ("كیف قرمز", ["كیف", "قرمز"]),  # (a Persian letter: no Arabic keyboard)
]


@pytest.mark.parametrize(("query", "expected"), STILL_ARABIC)
def test_an_arabic_question_is_not_read_as_persian_or_urdu(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


# (question, its keywords): Arabic's common misspellings, listed as words
@pytest.mark.parametrize(
    ("query", "expected"),
    [("هذة السيارة لكم؟", ["سيارة", "لكم"]), ("هل انتم في البيت؟", ["بيت"])],
)
def test_an_arabic_misspelling_is_a_stop_word(query: str, expected: list[str]) -> None:
    assert extract_keywords(query) == expected


def test_an_arabic_question_typed_on_a_persian_keyboard_recalls_its_note(
    ws: Workspace, index: NoteIndex
) -> None:
    """``هل القطة علی الطاولة؟`` kept ``علی``, which search reads as ``على`` (on): a note
    saying it many times came before the one about the cat."""
    root = ws.vault_dir("ar")
    root.mkdir(parents=True)
    (root / "cat.md").write_text("# 1\n\nالقطة نائمة فوق الطاولة.\n", encoding="utf-8")
    (root / "on.md").write_text("# 2\n\n" + " ".join(["على"] * 30) + "\n", encoding="utf-8")
    for number, text in enumerate(("ألف باء", "تاء ثاء", "جيم حاء")):
        (root / f"other{number}.md").write_text(f"# 3\n\n{text}\n", encoding="utf-8")
    index.reconcile()
    recall = Recall(Vault(Sandbox(ws), max_file_bytes=1 << 20), index)
    question = "هل القطة علی الطاولة؟"
    result = recall.recall("ar", question, 400)
    hits = [s["path"] for s in result["sources"] if s["layer"] == "on_demand"]
    assert hits == ["cat.md"], (extract_keywords(question), result["sources"])
