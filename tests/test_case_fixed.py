"""The trigram fold's case fixes by replace (``shared.reader_folds.case_fixed``) are the
translate's (``CASE_FIXES``), for every text: grep's table and its patterns are folded
alike, so a change of one character's fold loses matches."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from indexer.canonical import composed
from indexer.index.text import fold
from shared.reader_folds import CASE_FIXES, case_fixed

_PIECES = [
    "",
    " ",
    "a",
    "é",
    "e\u0301",
    "ΣΟΦΟΣ",
    "日本語",
    "ไทย",
    "عربي",
    "ẞ",
    "ﬁ",
    "\u00a0",
    "x" * 300,
]

_fold_text = st.one_of(
    st.text(),
    st.lists(st.sampled_from([*_PIECES, "\u0130", "\u0131", "\u0307", "\x00"])).map("".join),
    st.text(alphabet=st.sampled_from("İıi\u0307\x00aé日ΣΣ")),
)


@settings(max_examples=500, deadline=None)
@given(_fold_text)
def test_case_fixed_is_the_translate(text: str) -> None:
    assert case_fixed(text) == text.translate(CASE_FIXES)
    assert fold(text) == composed(text).translate(CASE_FIXES).casefold()
