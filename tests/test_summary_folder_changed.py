"""A folder that changes while its summary is made (the model's answer takes seconds):
the summary is not written over the change. Written into a folder another program was
emptying (``rm -rf`` between its listing and its ``rmdir``), it made the removal fail;
written over a folder whose notes changed, it was stale already. Dot-names (an editor's
swap file) are no change."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.llm_stub import LLMStub, running_llm_stub
from test_summaries import good_answer, make_core, note, request_data, settle, summaries_of, vault

from indexer.core import Core


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


@pytest.fixture
async def core(tmp_path: Path, stub: LLMStub) -> AsyncIterator[Core]:
    note(tmp_path, "a/one.md", "# One\n\nfirst\n")
    note(tmp_path, "a/two.md", "# Two\n\nsecond\n")
    note(tmp_path, "b/three.md", "# Three\n\nthird\n")
    built = make_core(tmp_path, stub)
    settle(built)
    yield built
    assert built.model is not None
    await built.model.close()
    if built.jobs is not None:
        built.jobs.stop()
    assert built.index is not None
    built.index.close()


def answering(stub: LLMStub, folder: str, meanwhile: Callable[[], object]) -> None:
    """The model answers well, running ``meanwhile`` first when asked about ``folder``."""

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if request_data(request)["folder"].strip("/") == folder:  # (asked as "a/")
            meanwhile()
        return good_answer(request, turn)

    stub.run(script)


async def test_a_folder_emptied_while_summarized_gets_no_summary_and_can_be_removed(
    tmp_path: Path, stub: LLMStub, core: Core
) -> None:
    folder = vault(tmp_path) / "a"

    def emptied() -> None:  # what rm -rf does before its rmdir
        for name in os.listdir(folder):
            (folder / name).unlink()

    answering(stub, "a", emptied)
    stats = await summaries_of(core).run_pass()
    assert not (folder / ".overview.md").exists()
    assert stats.unwritten == {"en": ["a"]}
    folder.rmdir()  # ("Directory not empty" while the summary was written into it)
    assert (vault(tmp_path) / "b" / ".overview.md").exists()  # the others are written


async def test_a_note_added_while_summarized_is_in_the_next_passs_summary(
    tmp_path: Path, stub: LLMStub, core: Core
) -> None:
    answering(stub, "a", lambda: note(tmp_path, "a/four.md", "# Four\n\nfourth\n"))
    summaries = summaries_of(core)
    await summaries.run_pass()
    assert not (vault(tmp_path) / "a" / ".overview.md").exists()  # (it named two notes)
    assert core.index is not None
    core.index.reconcile()
    stub.run(good_answer)
    await summaries.run_pass(dirty=summaries.dirty.take())
    overview = (vault(tmp_path) / "a" / ".overview.md").read_text(encoding="utf-8")
    assert "four.md" in overview and "one.md" in overview


async def test_an_editors_swap_file_is_no_change(tmp_path: Path, stub: LLMStub, core: Core) -> None:
    swap = vault(tmp_path) / "a" / ".one.md.swp"
    answering(stub, "a", lambda: swap.write_bytes(b"b0VIM 9.0"))
    stats = await summaries_of(core).run_pass()
    assert stats.unwritten == {}
    assert (vault(tmp_path) / "a" / ".overview.md").exists()


@pytest.mark.parametrize("name", ["sedX4Yq9a", "one.md~", "4913", "photo.jpg.part"])
async def test_another_programs_temporary_file_is_no_change(
    tmp_path: Path, stub: LLMStub, core: Core, name: str
) -> None:
    """``sed -i`` and vim save a note through a temporary file beside it: the summary made
    meanwhile is written at once, not left for the pass's timer."""
    temporary = vault(tmp_path) / "a" / name
    answering(stub, "a", lambda: temporary.write_bytes(b"saving"))
    stats = await summaries_of(core).run_pass()
    assert stats.unwritten == {}
    assert (vault(tmp_path) / "a" / ".overview.md").exists()


async def test_a_temporary_file_gone_since_listed_is_no_change(
    tmp_path: Path, stub: LLMStub, core: Core
) -> None:
    """Listed while ``sed -i`` saved (its file renamed over the note since): no change."""
    temporary = vault(tmp_path) / "a" / "sedQ0r8Zk"
    temporary.write_bytes(b"saving")
    answering(stub, "a", temporary.unlink)
    stats = await summaries_of(core).run_pass()
    assert stats.unwritten == {}
    assert (vault(tmp_path) / "a" / ".overview.md").exists()


async def test_a_subfolder_made_while_summarized_is_a_change(
    tmp_path: Path, stub: LLMStub, core: Core
) -> None:
    answering(stub, "a", lambda: (vault(tmp_path) / "a" / "new").mkdir())
    stats = await summaries_of(core).run_pass()
    assert stats.unwritten == {"en": ["a"]}
