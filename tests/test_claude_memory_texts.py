"""The memory tool's pure parts, without a server: path checks and size formatting held
to the SDK's own code, and a note's text surviving the server's frontmatter
normalization exactly (what the model wrote is what it reads back)."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import _format_file_size
from anthropic.tools import BetaLocalFilesystemMemoryTool
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_client.claude_memory import files, paths, texts
from shared import memory_view
from shared.frontmatter import normalize_frontmatter_text, parse_frontmatter

NOW = datetime(2026, 11, 29, 20, 0, tzinfo=UTC)


@given(st.one_of(st.integers(0, 5000), st.integers(0, 1 << 44)))
def test_sizes_are_formatted_as_the_sdk_does(size: int) -> None:
    assert texts.format_size(size) == _format_file_size(size)


def test_size_examples() -> None:
    assert [texts.format_size(n) for n in (0, 1, 1023, 1024, 1025, 1076, 1 << 40)] == [
        "0B", "1B", "1023B", "1K", "1.0K", "1.1K", "1024G",
    ]  # fmt: skip


SEGMENTS = ["a", "b.txt", "é", ".", "..", "", "a b", "memories", "x" * 256]


def _sdk_check(sdk: BetaLocalFilesystemMemoryTool, path: str) -> tuple[str, Any]:
    try:
        resolved = sdk._validate_path(path)
    except ToolError as err:
        return "refused", err.content
    except ValueError as err:
        return "raised", repr(err)
    return "ok", resolved.relative_to(sdk.memory_root.resolve()).parts


def _our_check(path: str) -> tuple[str, Any]:
    try:
        checked = paths.check(path)
    except ToolError as err:
        return "refused", err.content
    except ValueError as err:
        return "raised", repr(err)
    return "ok", checked.parts


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["/memories", "/memories/", "/memoriesa/", "/memories//", "memories/", "/m"]),
    st.lists(st.sampled_from([*SEGMENTS, "a\x00b"]), max_size=5),
    st.booleans(),
)
def test_paths_are_checked_and_resolved_as_the_sdk_does(
    prefix: str, segments: list[str], slash: bool
) -> None:
    """Same refusal text, or the same place below /memories (the SDK resolves on a real
    folder without links; an over-long name it only meets when it uses the path)."""
    path = prefix + "/".join(segments) + ("/" if slash else "")
    with tempfile.TemporaryDirectory() as base:
        sdk = BetaLocalFilesystemMemoryTool(base_path=str(Path(base) / "deep" / "base"))
        assert _our_check(path) == _sdk_check(sdk, path)


def test_long_names_are_refused_when_used() -> None:
    long = paths.check("/memories/" + "n" * 256)
    with pytest.raises(OSError) as info:
        long.usable()
    assert repr(info.value) == "OSError(36, 'File name too long')"
    assert paths.check("/memories/" + "é" * 127).usable().parts == ("é" * 127,)


def test_listing_order_is_depth_first_by_code_point() -> None:
    found = ["b.txt", "a/", "a b/", "a/z.md", "a/sub/", "É.md", "a b/x.txt", "A.txt"]
    assert texts.listing_order(found) == [
        "A.txt", "a/", "a/sub/", "a/z.md", "a b/", "a b/x.txt", "b.txt", "É.md",
    ]  # fmt: skip


# -- notes: the model's text through the server's normalization ----------------------------

BODIES = st.lists(st.sampled_from([*"ab -#\n\t€:", "---", "\n---\n"]), max_size=20).map("".join)


def _through_the_server(name: str, content: str, existing: str | None = None) -> str:
    return normalize_frontmatter_text(content, existing=existing, now=NOW, stem=name[:-3])


@settings(max_examples=200, deadline=None)
@given(BODIES, BODIES)
def test_a_note_reads_back_exactly_what_the_model_wrote(first: str, second: str) -> None:
    """create, then an edit: the body the model sees is its text, whatever its newlines
    or ``---`` lines, and the frontmatter (with a person's keys) is kept."""
    stored = _through_the_server("n.md", files.stored("n.md", first))
    seen = files.seen("n.md", stored, "etag")
    assert seen.text == first
    meta, _ = parse_frontmatter(stored)
    assert {"id", "title", "created", "updated"} <= set(meta)
    person = stored.replace("\ncreated:", "\nmood: calm\ncreated:", 1)
    edited = _through_the_server(
        "n.md", files.stored("n.md", second, files.seen("n.md", person, "e").meta), person
    )
    again = files.seen("n.md", edited, "etag")
    assert again.text == second
    assert again.meta["mood"] == "calm" and again.meta["id"] == meta["id"]


def test_trailing_newlines_are_recorded_only_when_needed() -> None:
    for text, count in (("a\n", None), ("a", 0), ("a\n\n\n", 3), ("", None), ("\n", 1)):
        meta, _ = parse_frontmatter(_through_the_server("n.md", files.stored("n.md", text)))
        assert meta.get(files.TRAILING_NEWLINES) == count, text


def test_carriage_returns_of_a_note_become_line_feeds() -> None:
    stored = _through_the_server("n.md", files.stored("n.md", "a\r\nb\rc\r\n"))
    assert files.seen("n.md", stored, "e").text == "a\nb\nc\n"


def test_text_files_are_stored_as_they_are() -> None:
    text = "---\ntitle: x\n---\r\nbody"
    assert files.stored("n.txt", text) == text
    assert files.seen("n.txt", text, "e").text == text


def test_a_note_written_by_a_person_without_frontmatter_is_all_body() -> None:
    assert files.seen("p.md", "# Hand\nwritten\n\n", "e").text == "# Hand\nwritten\n\n"
    seen = files.seen("p.md", "---\ntrailing_newlines: many\n---\nx\n", "e")
    assert seen.text == "x\n"  # a count that is not a number is ignored


def test_a_bom_another_program_left_is_not_written_back_mid_note() -> None:
    """Notepad's BOM was shown to the model, and written back after the new block."""
    seen = files.seen("list.md", "\ufeff# Shopping\r\nmilk\r\n", "e")
    assert seen.text == "# Shopping\r\nmilk\r\n"
    stored = _through_the_server("list.md", files.stored("list.md", seen.text + "oat\n"))
    assert "\ufeff" not in stored and "\n# Shopping\nmilk\noat\n" in stored


# Notes as people and programs leave them: no block, an unreadable one, CR line endings
# with and without a block, BOMs, counts that are no count, a block never closed.
ODD_NOTES = (
    "",
    "---",
    "---\n---",
    "---\n---\nx",
    "# Hand\r\nwritten\r\n\r\n",
    "\ufeff# with a BOM\n",
    "\ufeff---\ntitle: a\n---\r\nbody\r\n\r\n",
    "\ufeff\ufeff---\ntitle: a\n---\nbody\n",
    "---\ntitle: a\ntitle: b\n---\nrepeated key\n",
    "---\ntitle: [\n---\nYAML typo\n",
    "---\ntitle: never closed\nbody\n",
    "---\ntrailing_newlines: 3\n---\nthree\n",
    "---\ntrailing_newlines: 0\n---\nnone\n\n\n",
    "---\ntrailing_newlines: true\n---\nbool\n\n",
    "---\ntrailing_newlines: -1\n---\nnegative\n",
    "---\ntrailing_newlines: 99999999999\n---\nhuge\n",
    "---\ntrailing_newlines: 2025-01-01\n---\na date\n",
    "---\r\ntrailing_newlines: 2\r\n---\r\nCRLF é 日本\r\n",
    "---\ntrailing_newlines: 2\n---\n",
    "---\n- a list\n---\nnot a mapping\n",
)


@pytest.mark.parametrize("content", ODD_NOTES)
def test_the_servers_measure_of_a_note_is_what_the_model_sees(content: str) -> None:
    """``find``'s ``body_sizes`` (``shared.memory_view``) and the text the memory tool
    shows agree for any note: a listing shows the size of what ``view`` would show."""
    seen = files.seen("n.md", content, "e").text
    assert memory_view.shown_text(content) == seen
    assert memory_view.shown_size(content) == len(seen.encode("utf-8"))


@settings(max_examples=200, deadline=None)
@given(BODIES, st.sampled_from(["", "mood: calm\n", "trailing_newlines: 2\n", "x: [\n"]))
def test_the_servers_measure_of_a_written_note_is_what_the_model_sees(
    body: str, extra: str
) -> None:
    stored = _through_the_server("n.md", files.stored("n.md", body))
    stored = stored.replace("\ncreated:", f"\n{extra}created:", 1)
    seen = files.seen("n.md", stored, "e").text
    assert memory_view.shown_size(stored) == len(seen.encode("utf-8"))


@pytest.mark.parametrize(
    "text", ["\ufeffbom\n", "\ufeff", "\ufeff\ufeffx", "\ufeff---\na: 1\n---\nx"]
)
def test_a_bom_the_model_wrote_first_in_a_note_reads_back(text: str) -> None:
    """The SDK's tool keeps a U+FEFF the model's text starts with; the server drops one
    at a body's start (a BOM a block was put before), so the note records it, as it
    records trailing newlines, and the model sees and measures its text as written."""
    stored = _through_the_server("n.md", files.stored("n.md", text))
    assert files.seen("n.md", stored, "e").text == text
    assert memory_view.shown_size(stored) == len(text.encode("utf-8"))
    meta, _ = parse_frontmatter(stored)
    again = _through_the_server("n.md", files.stored("n.md", "plain\n", meta), stored)
    assert files.seen("n.md", again, "e").text == "plain\n"
    assert files.BYTE_ORDER_MARKS not in parse_frontmatter(again)[0]
