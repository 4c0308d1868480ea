"""Maintenance without a model (``maintenance_extract``): the entries tagged for USER.md
and PROJECT.md, a line each, added under their section; a person's text kept."""

from __future__ import annotations

import unicodedata

from indexer.jobs.maintenance_extract import MAX_DATED_LINES, MAX_LINE_CHARS, extracted

DAY = "events/2026/11/29.md"


def event(title: str, tags: str, text: str, day: str = "2026-11-29") -> str:
    return f"## Event\n\n- time: {day}T10:00:00+01:00\n- title: {title}\n- tags: {tags}\n\n{text}\n"


def sections(*texts: str, rel: str = DAY) -> list[tuple[str, int, str]]:
    return [(rel, number, text) for number, text in enumerate(texts)]


def test_each_tag_goes_to_its_file_and_section_and_untagged_entries_nowhere() -> None:
    log = sections(
        event("Tone", "preference", "Plain words."),
        event("Go", "learning", "Knows Python well, learning Go."),
        event("Early", "routine", "Starts at 7."),
        event("Cache", "decision", "SQLite, not Redis."),
        event("Launch", "milestone", "Beta by March."),
        event("Parser", "wip", "Rewriting the parser."),
        event("Old bug", "done", "Fixed the crash on empty files."),
        "## Event\n\nA chat about the weather.\n",
    )
    user = extracted(log, "user_profile", None, None).content
    project = extracted(log, "project_review", None, None).content
    assert user == (
        "# User profile\n\n## Preferences\n\n- Tone: Plain words. (2026-11-29)\n\n"
        "## Level and background\n\n- Go: Knows Python well, learning Go. (2026-11-29)\n\n"
        "## Habits\n\n- Early: Starts at 7. (2026-11-29)\n"
    )
    assert project is not None and "weather" not in project and "Plain" not in project
    headings = [line for line in project.splitlines() if line.startswith("#")]
    assert headings == ["# Project", "## Goals", "## Active threads", "## Decisions", "## Done"]


def test_tags_inline_nested_in_other_languages_and_section_headings_count() -> None:
    log = sections(
        "## Event\n\nPrefers tea over coffee #Preference\n",
        event("朝型", "習慣", "毎朝6時に起きる。それから散歩。"),
        event("Stack", "work/Decision", "Rust for the CLI."),
        "## Decision: drop Redis\n\nThe cache lives in SQLite now. It is enough.\n",
        event("Ｔｏｎｅ", "ＳＴＹＬＥ", "Formal."),  # full-width tags and title
    )
    user = extracted(log, "user_profile", None, None).content or ""
    assert "- Prefers tea over coffee #Preference (2026-11-29)" in user
    assert "- 朝型: 毎朝6時に起きる。それから散歩。 (2026-11-29)" in user  # its paragraph
    assert "- Ｔｏｎｅ: Formal. (2026-11-29)" in user
    project = extracted(log, "project_review", None, None).content or ""
    assert "- Stack: Rust for the CLI. (2026-11-29)" in project
    assert "- Decision: drop Redis: The cache lives in SQLite now. It is enough. (2026-11-29)" in (
        project
    )


def test_a_persons_file_keeps_its_text_and_gets_the_missing_lines_only() -> None:
    mine = (
        "---\ntitle: Me\ntags: [me]\n---\n# About me\n\nI am Ana.\n\n"
        "## Preferences\n\n- Dark mode everywhere.\n- Tone: Plain words.\n\n## Notes\n\nfree\n"
    )
    log = sections(
        event("Tone", "preference", "Plain words."),  # said already (without its date)
        event("Fonts", "preference", "Large fonts."),
        event("Walks", "habit", "Walks at noon."),
    )
    found = extracted(log, "user_profile", mine, None)
    assert found.action == "replace" and found.mark == f"{DAY}#2"
    assert found.content == (
        "---\ntitle: Me\ntags: [me]\n---\n# About me\n\nI am Ana.\n\n## Preferences\n\n"
        "- Dark mode everywhere.\n- Tone: Plain words.\n- Fonts: Large fonts. (2026-11-29)\n\n"
        "## Notes\n\nfree\n\n## Habits\n\n- Walks at noon. (2026-11-29)\n"
    )
    again = extracted(log, "user_profile", found.content, None)
    assert again.action == "none" and again.content is None


def test_only_the_entries_after_the_mark_are_taken_while_the_file_is_there() -> None:
    first = sections(event("A", "goal", "First."), event("B", "goal", "Second."))
    later = [*first, ("events/2026/11/29-2.md", 0, event("C", "goal", "Third."))]
    later.append(("events/2026/11/30.md", 0, event("D", "goal", "Fourth.", day="2026-11-30")))
    current = "# Project\n\n## Goals\n\n- B: Second. (2026-11-29)\n"  # A was deleted
    found = extracted(later, "project_review", current, f"{DAY}#1")
    assert found.mark == "events/2026/11/30.md#0"
    assert "First" not in (found.content or "") and "Third" in (found.content or "")
    assert "Fourth" in (found.content or "")
    assert extracted(later, "project_review", None, f"{DAY}#1").content is not None
    nothing = extracted(later, "project_review", current, "events/2026/11/30.md#0")
    assert nothing.action == "none" and nothing.mark == "events/2026/11/30.md#0"


def test_a_section_keeps_its_newest_dated_lines_and_a_persons_lines() -> None:
    log = [
        (f"events/2026/{month:02d}/01.md", 0, event(f"T{month}", "todo", f"Item {month}.",
                                                     day=f"2026-{month:02d}-01"))
        for month in range(1, 13)
    ]  # fmt: skip
    current = "# Project\n\n## Active threads\n\n- Mine, undated.\n" + "".join(
        f"- Old {n}: x. (2025-01-{n + 1:02d})\n" for n in range(MAX_DATED_LINES)
    )
    text = extracted(log, "project_review", current, None).content or ""
    dated = [line for line in text.splitlines() if line.endswith(")")]
    assert len(dated) == MAX_DATED_LINES and "- Mine, undated." in text
    assert "- T12: Item 12. (2026-12-01)" in text and "Old 11:" not in text and "Old 12:" in text


def test_a_long_entry_is_cut_where_a_character_ends() -> None:
    flag = "🇯🇵"
    decomposed = unicodedata.normalize("NFD", "é")
    log = sections(event("Long", "preference", (flag + decomposed) * 200 + "."))
    line = (extracted(log, "user_profile", None, None).content or "").splitlines()[-1]
    assert len(line) <= MAX_LINE_CHARS and line.endswith("… (2026-11-29)")
    cut = line.removeprefix("- Long: ").removesuffix("… (2026-11-29)")
    assert ((flag + decomposed) * 200).startswith(cut)
    assert not cut.endswith("e") and len(cut.split(decomposed)[-1]) in (0, len(flag))


def test_an_entry_holding_a_credential_and_an_empty_log_give_nothing() -> None:
    log = sections(event("Key", "preference", "token: ghp_4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e"))
    found = extracted(log, "user_profile", None, None)
    assert found.action == "none" and "no new entry" in found.reason
    assert extracted([], "user_profile", None, None).action == "none"


def test_a_chinese_or_japanese_vault_gets_its_own_headings_and_keeps_english_ones() -> None:
    log = sections(
        event("喝茶", "偏好", "只喝绿茶。"), event("DB", "decision", "选了 PostgreSQL。")
    )
    assert extracted(log, "user_profile", None, None, "zh-Hans").content == (
        "# 用户画像\n\n## 偏好\n\n- 喝茶: 只喝绿茶。 (2026-11-29)\n"
    )
    assert (extracted(log, "project_review", None, None, "ja").content or "").startswith(
        "# プロジェクト\n\n## 決定事項\n\n- DB: 选了 PostgreSQL。"
    )
    english = "# User profile\n\n## Preferences\n\n- Mine.\n"
    assert extracted(log, "user_profile", english, None, "zh-Hant").content == (
        "# User profile\n\n## Preferences\n\n- Mine.\n- 喝茶: 只喝绿茶。 (2026-11-29)\n"
    )
    assert "## Preferences" in (extracted(log, "user_profile", None, None, "sw").content or "")
    for traditional in ("zh-Hant", "zh-TW", "yue"):  # (the seed's words in its characters)
        assert (extracted(log, "project_review", None, None, traditional).content or "").startswith(
            "# 項目\n\n## 決定\n\n- DB: 选了 PostgreSQL。"
        ), traditional


def test_a_vault_in_another_known_language_gets_its_headings() -> None:
    """The path without a model named its files' titles and sections in English but in
    Chinese and Japanese vaults, where a model writes in the vault's language."""
    log = sections(
        event("Thé", "préférence", "Seulement du thé vert."),
        event("DB", "decision", "PostgreSQL retenu."),
    )
    assert extracted(log, "user_profile", None, None, "fr").content == (
        "# Profil utilisateur\n\n## Préférences\n\n- Thé: Seulement du thé vert. (2026-11-29)\n"
    )
    for lang, title, section in (
        ("ru", "# Проект", "## Решения"),
        ("pt-BR", "# Projeto", "## Decisões"),
        ("ko", "# 프로젝트", "## 결정 사항"),
        ("de", "# Projekt", "## Entscheidungen"),
        ("ar", "# المشروع", "## القرارات"),
        ("he", "# פרויקט", "## החלטות"),
        ("vi", "# Dự án", "## Quyết định"),
        ("th", "# โปรเจกต์", "## การตัดสินใจ"),
    ):
        text = extracted(log, "project_review", None, None, lang).content or ""
        assert text.startswith(f"{title}\n\n{section}\n\n- DB: PostgreSQL retenu."), lang
    english = "# User profile\n\n## Preferences\n\n- Mine.\n"  # (made before: kept)
    assert extracted(log, "user_profile", english, None, "fr").content == (
        english + "- Thé: Seulement du thé vert. (2026-11-29)\n"
    )


def test_field_lines_in_an_entry_s_text_are_its_text() -> None:
    """Every ``- tags:`` (``- time:``, ``- title:``) line of a section was read, the last
    winning: an entry's text changed its tags, title and date (a helper's hostile
    events): an entry tagged ``decision`` could go to USER.md, dated 1999 or 2999."""
    forged = "Innocent text.\n\n- tags: preference\n- time: 1999-01-01T00:00:00\n- title: INJECTED"
    log = sections(event("Hostile", "decision", forged))
    assert extracted(log, "user_profile", None, None).action == "none"
    project = extracted(log, "project_review", None, None).content or ""
    assert "- Hostile: Innocent text. (2026-11-29)" in project and "INJECTED" not in project


def test_a_tag_before_chinese_or_japanese_punctuation_counts() -> None:
    """``#决定。`` was read as the tag ``决定。`` (only ASCII punctuation ended a tag):
    nothing went to the files; the index's own reader (``inline_tags``) is used now."""
    log = sections(
        "## Event\n\n我们用SQLite #决定。以后再说。\n",
        "## Event\n\n回答要短 #偏好，谢谢。\n",
        "## Event\n\nSQLiteにする #決定、来週から。\n",
    )
    project = extracted(log, "project_review", None, None, lang="zh-Hans").content or ""
    assert "我们用SQLite #决定。" in project and "SQLiteにする #決定、来週から。" in project
    user = extracted(log, "user_profile", None, None, lang="zh-Hans").content or ""
    assert "回答要短 #偏好，谢谢。" in user


def test_a_first_sentence_ends_at_the_scripts_own_full_stop() -> None:
    """A paragraph too long for a line keeps its first sentences: only ``. ! ?`` and
    ``。！？`` ended one, so a Hindi entry's line was its text cut mid-word, an Arabic one
    was cut at a Latin full stop past its question mark."""
    long = " ".join(["शब्द"] * 80)
    log = sections(
        event("पसंद", "preference", f"मुझे छोटे उत्तर पसंद हैं। {long}। तीसरा वाक्य।"),
        event("تفضيل", "preference", f"أفضل الإجابات القصيرة؟ نعم {' '.join(['كلمة'] * 60)}."),
        event("Urdu", "preference", f"مختصر جواب پسند ہیں۔ {' '.join(['لفظ'] * 80)}۔"),
    )
    user = extracted(log, "user_profile", None, None).content or ""
    assert "- पसंद: मुझे छोटे उत्तर पसंद हैं। (2026-11-29)" in user
    assert "- تفضيل: أفضل الإجابات القصيرة؟ (2026-11-29)" in user
    assert "- Urdu: مختصر جواب پسند ہیں۔ (2026-11-29)" in user


def test_a_line_is_said_only_by_a_line_that_says_it() -> None:
    """An entry was taken as said when its text was anywhere in the file: ``Editor.``
    inside ``- Editor: Prefers dark mode in the editor.`` was never added."""
    mine = "# Me\n\n## Preferences\n\n- Editor: Prefers dark mode in the editor. (2026-12-01)\n"
    log = sections(event("Editor", "preference", "Editor."), event("Tone", "preference", "Plain."))
    found = extracted(log, "user_profile", mine, None)
    assert found.content is not None and "- Editor. (2026-11-29)" in found.content
    again = extracted(log, "user_profile", found.content, None)
    assert again.action == "none"  # (each is said now, by its own line)


def test_tags_in_the_languages_whose_headings_are_known_count() -> None:
    """An Arabic, Hebrew, Persian, Turkish, Vietnamese, Indonesian, Hindi, Thai or
    traditional Chinese vault's entries tagged in its own words went nowhere (only the
    English tag words and a few languages' counted), though its headings were in them."""
    cases = {  # lang: (preference, habit, goal, decision, to-do, done)
        "ar": ("تفضيل", "عادة", "هدف", "قرار", "مهمة", "منجز"),
        "he": ("העדפה", "הרגל", "מטרה", "החלטה", "משימה", "הושלם"),
        "fa": ("ترجیح", "عادت", "اهداف", "تصمیم", "وظیفه", "انجام‌شده"),
        "tr": ("tercih", "Alışkanlık", "hedef", "karar", "görev", "tamamlandı"),
        "vi": ("sở-thích", "thói_quen", "mục-tiêu", "quyết-định", "việc-cần-làm", "đã-xong"),
        "id": ("preferensi", "kebiasaan", "tujuan", "keputusan", "tugas", "selesai"),
        "hi": ("पसंद", "आदत", "लक्ष्य", "निर्णय", "कार्य", "पूर्ण"),
        "th": ("ความชอบ", "นิสัย", "เป้าหมาย", "การตัดสินใจ", "สิ่งที่ต้องทำ", "เสร็จแล้ว"),
        "zh-TW": ("偏好", "習慣", "目標", "決定", "待辦", "完成"),
    }
    for lang, tags in cases.items():
        log = sections(*(event(f"T{n}", tag, f"Entry {n}.") for n, tag in enumerate(tags)))
        user = extracted(log, "user_profile", None, None, lang).content or ""
        project = extracted(log, "project_review", None, None, lang).content or ""
        for n in (0, 1):
            assert f"- T{n}: Entry {n}. (2026-11-29)" in user, (lang, tags[n], user)
        for n in (2, 3, 4, 5):
            assert f"- T{n}: Entry {n}. (2026-11-29)" in project, (lang, tags[n], project)
        assert len([line for line in project.splitlines() if line.startswith("## ")]) == 4
    heading = "## قرار: PostgreSQL\n\nقررنا استخدام PostgreSQL. السبب الأداء.\n"
    project = extracted(sections(heading), "project_review", None, None, "ar").content or ""
    assert "- قرار: PostgreSQL: قررنا استخدام PostgreSQL. السبب الأداء. (2026-11-29)" in project


def test_a_heading_typed_another_way_in_persian_or_with_vowels_is_found() -> None:
    """A Persian heading typed with a space or nothing for the non-joiner, or with the
    Arabic yeh and kaf of an Arabic keyboard, and an Arabic or Hebrew heading written with
    its vowel points, were not found: a second heading of the same name was added."""
    log = sections(event("DB", "decision", "PostgreSQL."), event("Walk", "habit", "Daily."))
    for lang, task, current in (
        ("fa", "project_review", "# پروژه\n\n## تصمیم ها\n\n- Mine.\n"),
        ("fa", "project_review", "# پروژه\n\n## تصميمها\n\n- Mine.\n"),
        ("fa", "user_profile", "# نمایه کاربر\n\n## عادت ها\n\n- Mine.\n"),
        ("ar", "project_review", "# المشروع\n\n## القَرَارَات\n\n- Mine.\n"),
        ("he", "user_profile", "# פרופיל\n\n## הֶרְגֵּלִים\n\n- Mine.\n"),
    ):
        text = extracted(log, task, current, None, lang).content or ""
        assert text.count("\n## ") == 1, (lang, text)
        assert text.startswith(current), (lang, text)


def test_a_heading_of_several_words_names_its_section_in_every_known_language() -> None:
    """A heading's words were looked up one by one: ``## Quyết định: …`` (Vietnamese
    writes a word as syllables apart), ``## Active threads``, ``## En cours`` and the
    other sections' names of several words routed nothing."""
    cases = [  # (lang, heading, task, section heading in that vault)
        ("vi", "Quyết định: dùng PostgreSQL", "project_review", "## Quyết định"),
        ("vi", "Sở thích", "user_profile", "## Sở thích"),
        ("vi", "Đã xong: trình phân tích", "project_review", "## Đã xong"),
        ("vi", "Mục tiêu quý tới", "project_review", "## Mục tiêu"),
        ("vi", "Thói quen buổi sáng", "user_profile", "## Thói quen"),
        ("vi", "Trình độ và nền tảng", "user_profile", "## Trình độ và nền tảng"),
        ("en", "Active threads", "project_review", "## Active threads"),
        ("en", "To do: the parser", "project_review", "## Active threads"),
        ("de", "Laufende Themen", "project_review", "## Laufende Themen"),
        ("fr", "En cours : le parseur", "project_review", "## En cours"),
        ("id", "Latar belakang", "user_profile", "## Tingkat dan latar belakang"),
        ("ko", "진행 중", "project_review", "## 진행 중"),
        ("fa", "در جریان", "project_review", "## در جریان"),
        ("ar", "قيد التنفيذ", "project_review", "## قيد التنفيذ"),
        ("tr", "Devam edenler", "project_review", "## Devam edenler"),
    ]
    for lang, heading, task, section in cases:
        log = sections(f"## {heading}\n\nSome text here. More.\n")
        text = extracted(log, task, None, None, lang).content or ""
        assert f"{section}\n\n- {heading}: Some text here. More. (2026-11-29)" in text, (lang, text)
    for heading in ("Acerca de la caché", "Notes: en, cours", "Thói, quen"):
        log = sections(f"## {heading}\n\nSome text here.\n")
        for task in ("user_profile", "project_review"):
            assert extracted(log, task, None, None, "es").action == "none", heading


def test_a_persian_tag_typed_with_the_arabic_yeh_and_kaf_counts() -> None:
    """``تصميم`` (decision, with the Arabic yeh an Arabic keyboard types) went nowhere,
    though the tags filter and search read it as ``تصمیم``."""
    log = sections(
        event("T0", "تصميم", "Entry 0."),
        event("T1", "ترجيح", "Entry 1."),
        "## واقعيت: PostgreSQL\n\nEntry 2.\n",
    )
    user = extracted(log, "user_profile", None, None, "fa").content or ""
    project = extracted(log, "project_review", None, None, "fa").content or ""
    assert "## ترجیحات\n\n- T1: Entry 1. (2026-11-29)" in user
    assert "## تصمیم‌ها\n\n- T0: Entry 0. (2026-11-29)" in project
    assert "## واقعیت‌ها\n\n- واقعيت: PostgreSQL: Entry 2. (2026-11-29)" in project


def test_an_entrys_paragraph_is_kept_whole_or_by_the_sentences_that_fit() -> None:
    """Its first sentence alone lost the rest: ``No emojis please.`` never reached
    USER.md. A paragraph too long for a line keeps the whole sentences that fit."""
    third = " ".join(["padding"] * 40) + "."
    log = sections(
        event(
            "Replies", "preference", "Keep replies short and in plain English. No emojis please."
        ),
        event("Editor", "preference", f"Dark mode. Large fonts in every editor. {third}"),
    )
    user = extracted(log, "user_profile", None, None).content or ""
    assert "- Replies: Keep replies short and in plain English. No emojis please. (2026-11-29)" in (
        user
    )
    assert "- Editor: Dark mode. Large fonts in every editor. (2026-11-29)" in user
    assert all(len(line) <= 240 for line in user.splitlines())


def test_a_mark_of_other_digits_is_no_mark() -> None:
    """A state file edited by hand to a mark whose number is not ASCII digits (``#²``,
    ``#٣``) takes every entry, as a mark not read does (``int`` raised on ``²``)."""
    log = sections(event("A", "goal", "First."), event("B", "goal", "Second."))
    current = "# Project\n\n## Goals\n"
    for mark in (f"{DAY}#\u00b2", f"{DAY}#\u0663", f"{DAY}#x"):
        found = extracted(log, "project_review", current, mark)
        assert "First" in (found.content or "") and "Second" in (found.content or ""), mark
