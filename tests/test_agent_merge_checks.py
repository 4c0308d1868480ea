"""What a model's merge must do, checked in the client: add the entry, keep the note.

A model that wrote unrelated text ("merged", the entry nowhere) or wrote a note back as
its frontmatter alone (forty facts gone, "merged") was taken at its word. Real SDK,
scripted local model, real ``indexer serve`` (as ``test_agent_llm``)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.indexer_process import RunningIndexer
from helpers.llm_stub import LLMStub, final, last_tool_result, tool_call
from test_agent_llm import entry, lang, read_content, run_entry, seed, stub, vault_dir

from agent_client.merge.coverage import (
    MIN_ADDED,
    MIN_KEPT,
    MIN_LENGTH,
    added_lines,
    entry_share,
    kept_share,
    length_share,
    words,
)
from shared.workspace import OVERVIEW_FILE

__all__ = ["lang", "stub"]  # (the fixtures, shared with the LLM path's tests)

FACTS = "".join(f"- fact {n}: the build server {n} runs on port {8000 + n}\n" for n in range(40))
PROJECT = f"---\ntitle: Project facts\ntype: item\n---\n# Project facts\n\n{FACTS}"
FACTS_ZH = "".join(f"- 第{n}条：服务器{n}号运行在端口{8000 + n}上\n" for n in range(40))


def vault_text(server: RunningIndexer, lang: str) -> str:
    """Every note of the vault, concatenated (not the folder summaries, which quote them)."""
    notes = sorted(vault_dir(server, lang).rglob("*.md"))
    return "\n".join(p.read_text() for p in notes if p.name != OVERVIEW_FILE)


def test_a_merge_that_writes_something_else_falls_back_and_the_entry_is_kept(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    stub.run(
        [
            tool_call("write", path="items/allergy.md", content="# Unrelated\n\nLorem ipsum.\n"),
            final(["items/allergy.md"], "merged"),
        ]
    )
    item = entry(lang, "Allergy", "The user is allergic to penicillin.")
    notice = run_entry(server, stub, item, fallback=True)
    assert notice.ok and notice.method == "fallback", notice
    assert "entry's words" in (notice.fallback_reason or "")
    text = vault_text(server, lang)
    assert "allergic to penicillin" in text and "Lorem ipsum" not in text


def test_without_the_fallback_such_a_merge_fails_and_changes_nothing(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    path = seed(server, lang, "items/project-facts.md", PROJECT)
    stub.run(
        [
            tool_call("read", path="items/project-facts.md"),
            tool_call("write", path="items/project-facts.md", content=PROJECT + "- unrelated\n"),
            final(["items/project-facts.md"], "merged"),
        ]
    )
    notice = run_entry(server, stub, entry(lang, "Allergy", "The user is allergic to penicillin."))
    assert not notice.ok and notice.method == "none"
    assert path.read_text() == PROJECT


def test_a_write_that_drops_what_a_note_held_is_refused_to_the_model(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    path = seed(server, lang, "items/project-facts.md", PROJECT)
    said: list[str] = []

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/project-facts.md")
        if turn == 1:  # the frontmatter and the entry alone
            wiped = PROJECT.split("# Project facts")[0] + "- deadline: 2027-01-15\n"
            return tool_call("write", path="items/project-facts.md", content=wiped)
        if turn == 2:
            said.append(last_tool_result(request))
            return tool_call("read", path="items/project-facts.md")
        if turn == 3:
            content = read_content(request) + "- deadline: 2027-01-15\n"
            return tool_call("write", path="items/project-facts.md", content=content)
        return final(["items/project-facts.md"], "merged")

    stub.run(script)
    notice = run_entry(server, stub, entry(lang, "Deadline", "The deadline is 2027-01-15."))
    assert notice.ok and notice.method == "llm", notice.error
    assert said[0].startswith("invalid_argument: a merge adds to items/project-facts.md")
    assert "your text keeps 1% of its words" in said[0]
    text = path.read_text()
    assert FACTS in text and text.endswith("- deadline: 2027-01-15\n")


def test_a_model_that_insists_on_dropping_a_note_ends_in_the_fallback(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    path = seed(server, lang, "items/project-facts.md", PROJECT)
    wiped = PROJECT.split("# Project facts")[0] + "# Project facts\n\n- deadline: 2027-01-15\n"
    stub.run(
        [
            tool_call("read", path="items/project-facts.md"),
            tool_call("write", path="items/project-facts.md", content=wiped),
            final(["items/project-facts.md"], "merged"),
        ]
    )
    notice = run_entry(
        server, stub, entry(lang, "Deadline", "The deadline is 2027-01-15."), fallback=True
    )
    assert notice.ok and notice.method == "fallback", notice
    text = vault_text(server, lang)
    assert FACTS in path.read_text() and "2027-01-15" in text


def test_a_merge_that_rewords_and_reorders_is_a_merge(
    server: RunningIndexer, stub: LLMStub, lang: str
) -> None:
    """Reworded, reordered, a fact edited: still most of the note's words, and the
    entry's, in any script."""
    reordered = "".join(reversed(FACTS.splitlines(keepends=True)))[: len(FACTS) * 3 // 4]
    path = seed(server, lang, "items/project-facts.md", PROJECT)
    zh = seed(server, lang, "items/服务器.md", f"# 服务器\n\n{FACTS_ZH}")
    stub.run(
        [
            tool_call("read", path="items/project-facts.md"),
            tool_call("read", path="items/服务器.md"),
            tool_call(
                "write",
                path="items/project-facts.md",
                content=PROJECT.replace(FACTS, reordered) + "- Staging moved to port 9000.\n",
            ),
            tool_call(
                "write",
                path="items/服务器.md",
                content=f"# 服务器\n\n{FACTS_ZH}- 预发布环境改用端口9000\n",
            ),
            final(["items/project-facts.md", "items/服务器.md"], "merged"),
        ]
    )
    item = entry(lang, "Staging", "Staging now runs on port 9000. 预发布环境现在用端口9000。")
    notice = run_entry(server, stub, item)
    assert notice.ok and notice.method == "llm", notice.error
    assert "port 9000" in path.read_text() and "端口9000" in zh.read_text()


@pytest.mark.parametrize(
    ("entry_text", "added", "judged"),
    [
        ("The user is allergic to penicillin.", "- Allergic to penicillin", True),
        ("The user is allergic to penicillin.", "- Penicillin allergy", True),
        ("The user is allergic to penicillin.", "- Allergies: penicillin", True),
        ("The user is allergic to penicillin.", "# Unrelated\n\nLorem ipsum.", False),
        ("Der Benutzer hat eine Allergie gegen Penicillin.", "- Penicillinallergie", True),
        ("Kullanıcının penisiline alerjisi var.", "- Penisilin alerjisi", True),
        ("Käyttäjä on allerginen penisilliinille.", "- Allergia: penisilliini", True),
        ("사용자는 페니실린에 알레르기가 있다.", "- 페니실린 알레르기 (사용자)", True),
        ("사용자는 매일 아침 여섯 시에 일어난다.", "- 기상: 매일 아침 여섯 시", True),
        ("사용자는 매일 아침 여섯 시에 일어난다.", "- 회의: 금요일 오후", False),
        ("Пользователь страдает аллергией на пенициллин.", "- Аллергия: пенициллин", True),
        ("उपयोगकर्ता को पेनिसिलिन से एलर्जी है।", "- एलर्जी: पेनिसिलिन", True),
        ("المستخدم لديه حساسية من البنسلين.", "- الحساسية: البنسلين", True),
        ("Người dùng thích uống cà phê sữa đá", "- Thích cà phê sữa đá", True),
        ("ተጠቃሚው ቡና መጠጣት ይወዳል", "- ቡና መጠጣት ይወዳል", True),  # Ethiopic syllables
        ("用户住在北京已经五年了", "- 居住地：北京（五年）", True),
        ("毎朝コーヒーを飲みます", "- 朝はコーヒー派", True),
        ("用户对青霉素过敏。", "- 项目使用的是新的服务器", False),
        # a stem where a word starts, a short word whole: not ``use`` in ``used``
        ("The user is allergic to penicillin.", "- Smaller caches are used.", False),
        ("The user prefers dark mode in every editor", "- Standard modules are used", False),
        ("用户对青霉素过敏。", "- 对青霉素过敏（2026）", True),
        ("ผู้ใช้แพ้ยาเพนิซิลลิน", "- แพ้ยาเพนิซิลลิน", True),
        ("المستخدم يعاني من حساسية البنسلين", "- حساسية البنسلين لدى المستخدم", True),
        ("المستخدم يعاني من حساسية البنسلين", "- ملاحظات عامة عن المشروع", False),
    ],
)
def test_an_entrys_words_are_told_in_any_script(entry_text: str, added: str, judged: bool) -> None:
    share = entry_share(entry_text, added)
    assert share is not None and (share >= MIN_ADDED) is judged, share


def test_a_list_marked_again_adds_no_line() -> None:
    """A merge that only re-marked a note's list (``-`` to ``*``) added every line."""
    note = "# Facts\n\n- the build server runs on port 8001\n- backups at 03:00\n"
    written = note.replace("- ", "* ") + "* nothing else\n"
    assert added_lines(note, written) == "* nothing else"
    assert entry_share("The build server now runs on port 9443", added_lines(note, written)) == 0


def test_a_running_log_cut_to_its_last_quarter_is_no_merge() -> None:
    """Its lines share most of their words: the share of words kept missed it."""
    services = ("api", "web", "db")
    lines = [
        f"- 2026-11-{d:02d} 10:00 deploy of {s} finished ok" for d in range(1, 29) for s in services
    ]
    note = "# Log\n\n" + "\n".join(lines) + "\n"
    cut = "# Log\n\n" + "\n".join(lines[-21:]) + "\n"
    kept, length = kept_share(note, cut), length_share(note, cut)
    assert kept is not None and kept >= MIN_KEPT
    assert length is not None and length < MIN_LENGTH


def test_a_short_note_or_entry_is_not_judged() -> None:
    assert entry_share("tea", "coffee") is None
    assert kept_share("# A\n\none two three\n", "# A\n") is None
    assert words("Ｆｕｌｌ width 東京都") == {"full", "width", "東京", "京都"}
