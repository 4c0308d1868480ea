"""A Korean question often asks with a noun made a verb by 하다 or 되다 (``결정했나요``,
did you decide; ``변경된``, changed): recall also seeks the noun (``결정``), which a note
says in another form (``결정했다``) or alone; the word as written stays a keyword."""

from __future__ import annotations

from helpers.indexed_notes import index_notes
from test_digit_search import on_demand_of

from indexer.index.service import NoteIndex
from indexer.jobs.keywords import extract_keywords
from shared.workspace import Workspace


def test_the_noun_of_a_verb_is_a_keyword() -> None:
    assert extract_keywords("무엇을 결정했나요?") == ["결정", "결정했나요"]
    assert extract_keywords("언제 시작했어?") == ["시작", "시작했어"]
    assert extract_keywords("서버를 변경한 이유는?") == ["서버", "변경", "변경한", "이유"]
    assert extract_keywords("배포가 완료됐어?")[-2:] == ["완료", "완료됐어"]
    assert extract_keywords("해결했다") == ["해결", "해결했다"]  # (해 opening the noun)
    for word in ("강한", "대한민국", "데이터베이스", "한국"):  # (no noun of 2 before)
        assert extract_keywords(word) == [word], word


def test_recall_finds_the_note_of_the_noun(ws: Workspace, index: NoteIndex) -> None:
    index_notes(ws, index, "ko", {
        "db.md": "# 회의\n\n데이터베이스를 PostgreSQL로 바꾸기로 결정했다.\n",
        "start.md": "# 일정\n\n프로젝트 시작은 3월이다.\n",
        "other.md": "# 기타\n\n점심은 김밥이었다.\n",
    })  # fmt: skip
    on_demand = on_demand_of(ws, index, "ko")
    assert on_demand("무엇을 결정했나요?") == ["db.md"]
    assert on_demand("언제 시작했어?") == ["start.md"]
