"""``searchable`` takes the Greek accents off only between the first and last Greek
character (``text.greek_bare``): the same text as the translate of the whole, for every
text (the index and the queries are read alike, so a changed character loses matches)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.index import text as text_module
from indexer.index.text import greek_bare, searchable
from shared.reader_folds import GREEK_BASES

_PIECES = [
    "",
    " ",
    "a",
    "é",
    "e\u0301",
    "Καλημέρα",
    "ΐΰϊϋ",
    "ὀδυσσεύς ᾄδω ῥήτωρ ᾯ",
    "σοφός ΣΟΦΟΣ",
    "α\u0301",
    "ͺ;΄΅·",
    "ϐϑϕϖϰϱϲϳϴϵ϶ϷϸϹϺϻϼϽϾϿ",
    "Ͱͱ",
    "日本語",
    "ไทย",
    "عَرَبِيّ",
    "Привет",
    "ﬁ①",
    "\u00a0\u200b",
    "\ud800",
    "x" * 300,
    "ῼ",
]

_greek_text = st.one_of(
    st.text(),
    st.lists(st.sampled_from(_PIECES)).map("".join),
    st.text(alphabet=st.characters(min_codepoint=0x370, max_codepoint=0x3FF)),
    st.text(alphabet=st.characters(min_codepoint=0x1F00, max_codepoint=0x1FFF)),
    st.text(alphabet=st.sampled_from("aé日ά ἀῼΐ\u0301ςσ\ud800")),
)


def _whole(text: str) -> str:
    """The old step: the translate of the whole text."""
    return text.translate(GREEK_BASES)


@settings(max_examples=500, deadline=None)
@given(_greek_text)
def test_greek_bare_is_the_translate_of_the_whole(text: str) -> None:
    assert greek_bare(text, text.encode("utf-8", "surrogatepass")) == _whole(text)


@settings(max_examples=300, deadline=None)
@given(_greek_text.filter(lambda text: not any("\ud800" <= c <= "\udfff" for c in text)))
def test_searchable_is_as_before(text: str) -> None:  # (a note's text is valid UTF-8)
    new = searchable(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(text_module, "greek_bare", lambda text, data: _whole(text))
        assert new == searchable(text)


def test_only_the_greek_span_is_looked_at() -> None:
    """Accented letters a translate of the whole would change stay outside the span."""
    assert greek_bare("ά x ά", "ά x ά".encode()) == "α x α"
    text = "café ά naïve"
    assert greek_bare(text, text.encode()) == "café α naïve"
