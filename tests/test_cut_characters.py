"""A file read past its size limit, and a model's reason cut to its length, keep their
characters whole: no U+FFFD where a cut split one, no conjunct or emoji sequence
broken (a helper's finds)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from indexer.jobs.maintenance_answer import MAX_REASON_CHARS, parse_answer
from indexer.jobs.maintenance_input import event_sections, newest_entries
from indexer.jobs.recall import Recall
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.utf8 import whole_characters
from shared.workspace import Workspace

LIMIT = 64 * 1024


def test_a_character_split_by_a_cut_is_left_out_not_replaced() -> None:
    text = "a中é😀".encode()
    for end in range(len(text) + 1):
        head = whole_characters(text[:end], cut_after=end < len(text))
        assert "\ufffd" not in head and text.decode().startswith(head)
        tail = whole_characters(text[end:], cut_before=end > 0)
        assert "\ufffd" not in tail and text.decode().endswith(tail)
    assert whole_characters(b"ok\xff\xfeok") == "ok\ufffd\ufffdok"  # (not UTF-8: as before)


def vault_of(tmp_path: Path) -> Vault:
    ws = Workspace(tmp_path / "ws")
    ws.vault_dir("zh").mkdir(parents=True)
    return Vault(Sandbox(ws), max_file_bytes=LIMIT)


def test_an_oversized_user_md_in_recall_ends_on_a_whole_character(tmp_path: Path) -> None:
    vault = vault_of(tmp_path)
    root = vault.sandbox.workspace.vault_dir("zh")
    for pad in ("", "x", "xx"):  # (one of them puts the limit inside a character)
        text = f"# 用户画像{pad}\n\n" + "喜欢绿茶。" * (LIMIT // 10)
        (root / "USER.md").write_text(text, encoding="utf-8")
        assert os.path.getsize(root / "USER.md") > LIMIT
        read = Recall(vault, None)._read(str(root), "USER.md")
        assert read is not None and "\ufffd" not in read and text.startswith(read)


def test_a_day_file_read_from_its_end_starts_on_a_whole_character(tmp_path: Path) -> None:
    vault = vault_of(tmp_path)
    day = vault.sandbox.workspace.vault_dir("zh") / "events/2026/11/29.md"
    day.parent.mkdir(parents=True)
    for pad in ("", "x", "xx"):  # (one of them starts the tail inside a character)
        # A day file of free text (no "## " sections: the whole is one entry)
        day.write_text("# 事件\n\n" + "前" * (LIMIT // 3 + 7) + f"{pad}\n", encoding="utf-8")
        sections = event_sections(vault, "zh", 10)
        entries = newest_entries(vault, "zh")
        assert len(sections) == 1 and "\ufffd" not in sections[0][2]
        assert entries and all("\ufffd" not in entry.text for entry in entries)


def test_a_models_reason_is_cut_between_characters_as_seen() -> None:
    for tail in ("\u0915\u094d\u0937", "\U0001f468\u200d\U0001f469", "e\u0301\u0323"):
        reason = "a" * (MAX_REASON_CHARS - 1) + tail
        answer = parse_answer(json.dumps({"action": "none", "reason": reason}))
        assert len(answer.reason) <= MAX_REASON_CHARS and answer.reason.rstrip("…").endswith("a")
