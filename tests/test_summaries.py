"""Directory summaries: the seed-001 DAG over real files and a real index, with the
OpenAI-compatible stub (driven by the real openai SDK) as the model."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.llm_stub import LLMStub, RawReply, Script, http_error, running_llm_stub, say
from helpers.snapshots import snapshot

from indexer.core import Core
from indexer.daemon import build_core
from indexer.jobs import summaries as summaries_module
from indexer.jobs.dirty import DirtyFolders
from indexer.jobs.llm import ModelSettings
from indexer.jobs.previews import ENTRY_CHARS, Previews
from indexer.jobs.summaries import Summaries
from indexer.jobs.summary_files import Summary
from indexer.jobs.summary_texts import fallback_overview, most_recent
from indexer.settings import Settings
from shared.errors import ForbiddenPathError, InvalidArgumentError, NotFoundError
from shared.frontmatter import parse_frontmatter
from shared.workspace import Workspace

LEAVES = [f"t{i}/s{j}" for i in range(4) for j in range(5)]  # 20 leaves, 25 folders


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


@pytest.fixture
async def quiet_stub(stub: LLMStub) -> AsyncIterator[LLMStub]:
    """The stub with no request of an earlier test still in flight, answering as a model
    should: an abstract naming the folder and a hash of its children's abstracts (so a
    change travels up), and an overview listing the children."""
    while stub.in_flight:
        await asyncio.sleep(0.02)
    stub.delay = 0.0
    stub.run(good_answer)
    yield stub
    stub.delay = 0.0


def request_data(request: dict[str, Any]) -> dict[str, Any]:
    return json.loads(request["messages"][1]["content"])  # type: ignore[no-any-return]


def good_answer(request: dict[str, Any], turn: int) -> dict[str, Any]:
    data = request_data(request)
    seen = hashlib.sha256(json.dumps(data["children"]).encode()).hexdigest()[:8]
    lines = [f"- {c['name']}: {c['abstract']}" for c in data["children"]]
    answer = {
        "abstract": f"About {data['folder']} #{seen}",
        "overview": "# Contents\n" + "\n".join(lines),
    }
    return say(json.dumps(answer))


def asked_folders(stub: LLMStub) -> list[str]:
    return [request_data(r)["folder"] for r in stub.requests]


def make_core(
    tmp_path: Path,
    stub: LLMStub | None = None,
    *,
    concurrency: int = 10,
    timeout: float = 30,
    max_children: int = 50,
    debounce: float = 2.0,
) -> Core:
    model = None
    if stub is not None:
        model = ModelSettings(
            model="stub", base_url=stub.base_url, max_concurrency=concurrency, timeout=timeout
        )
    settings = Settings(
        workspace=Workspace(tmp_path / "ws"),
        model=model,
        summaries_max_children=max_children,
        summaries_debounce=debounce,
    )
    return build_core(settings)


@pytest.fixture
async def cores() -> AsyncIterator[list[Core]]:
    """Cores a test built, closed afterwards (index, model clients)."""
    built: list[Core] = []
    yield built
    for core in built:
        if core.model is not None:
            await core.model.close()
        if core.jobs is not None:
            core.jobs.stop()
        if core.index is not None:
            core.index.close()


def vault(tmp_path: Path, lang: str = "en") -> Path:
    return tmp_path / "ws" / "memory" / "languages" / lang / "vault"


def note(tmp_path: Path, rel: str, text: str, lang: str = "en") -> Path:
    path = vault(tmp_path, lang) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def tree(tmp_path: Path) -> None:
    """25 folders: t0..t3, each with s0..s4, each holding two notes; one note at the root."""
    note(tmp_path, "welcome.md", "---\ntype: guide\n---\n# Welcome\n\nStart here.\n")
    for leaf in LEAVES:
        for k in range(2):
            note(tmp_path, f"{leaf}/n{k}.md", f"# Note {leaf} {k}\n\nAbout {leaf}, part {k}.\n")


def summary_file(tmp_path: Path, folder: str, lang: str = "en") -> tuple[dict[str, Any], str]:
    text = (vault(tmp_path, lang) / folder / ".overview.md").read_text(encoding="utf-8")
    return parse_frontmatter(text)


def settle(core: Core) -> None:
    """Bring the index up to date; what its reconcile marked dirty is dropped (as the
    background loop does before its full pass)."""
    assert core.index is not None
    core.index.reconcile()
    summaries_of(core).dirty.take()
    summaries_of(core).dirty.done()


def ready(tmp_path: Path, cores: list[Core]) -> Core:
    """A core on ``tmp_path`` whose index is up to date (closed with ``cores``)."""
    core = make_core(tmp_path)
    cores.append(core)
    settle(core)
    return core


def summaries_of(core: Core) -> Summaries:
    assert core.summaries is not None
    return core.summaries


@contextlib.asynccontextmanager
async def serving(
    tmp_path: Path, stub: LLMStub, cores: list[Core], notes: list[str], script: Script
) -> AsyncIterator[tuple[Core, Summaries]]:
    """A core whose summaries run in the background as the server's do (short debounce),
    over one note in each folder of ``notes``, the model answering by ``script``: yielded
    once the start-up pass is done."""
    for folder in notes:
        note(tmp_path, f"{folder}/a.md", f"# A {folder}\n\nnote of {folder}\n")
    core = make_core(tmp_path, stub, debounce=0.05)
    cores.append(core)
    settle(core)
    summaries = summaries_of(core)
    stub.run(script)
    loop = asyncio.create_task(summaries.run_forever())
    try:
        while not summaries.ready:
            await asyncio.sleep(0.02)
        yield core, summaries
    finally:
        loop.cancel()


def made_by(tmp_path: Path, folders: list[str]) -> set[str]:
    """How the folders' summary files were made (``llm``, ``fallback``; ``none`` yet)."""
    made = set()
    for folder in folders:
        path = vault(tmp_path) / folder / ".overview.md"
        made.add(
            str(summary_file(tmp_path, folder)[0]["generated_by"]) if path.exists() else "none"
        )
    return made


async def until(done: Callable[[], bool], what: object, seconds: float = 15) -> None:
    """Wait for ``done``; past ``seconds``, fail saying ``what`` (called if callable: a
    list given as it is, the stub's requests, is said as it then is)."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, what() if callable(what) else what
        await asyncio.sleep(0.05)


# -- the DAG ---------------------------------------------------------------------------


async def test_a_parent_is_summarized_once_after_all_its_children(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    tree(tmp_path)
    quiet_stub.delay = 0.1
    core = make_core(tmp_path, quiet_stub, concurrency=10)
    cores.append(core)
    settle(core)
    stats = await summaries_of(core).run_pass()
    assert (stats.folders, stats.llm, stats.fallback, stats.skipped) == (25, 25, 0, 0)
    folders = asked_folders(quiet_stub)
    expected = ["/"] + [f"t{i}/" for i in range(4)] + [f"{leaf}/" for leaf in LEAVES]
    assert sorted(folders) == sorted(expected)  # each folder exactly once
    assert quiet_stub.max_in_flight == 10  # 20 leaves were ready at once; 10 went out
    for request in quiet_stub.requests:
        data = request_data(request)
        prefix = "" if data["folder"] == "/" else data["folder"]
        for child in data["children"]:
            if child["kind"] == "folder":  # the model's answer for that child: asked before
                assert child["abstract"].startswith(f"About {prefix}{child['name']} #")
    meta, body = summary_file(tmp_path, "")
    assert meta["type"] == "summary" and meta["generated_by"] == "llm"
    assert meta["abstract"].startswith("About / #") and meta["child_count"] == 5
    assert meta["categories"] == ["folder", "guide"]
    assert body.startswith("# Contents\n- t0/: About t0/ #")


async def test_model_calls_are_bounded_by_the_concurrency_setting(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    tree(tmp_path)
    quiet_stub.delay = 0.05
    core = make_core(tmp_path, quiet_stub, concurrency=3)
    cores.append(core)
    settle(core)
    stats = await summaries_of(core).run_pass()
    assert stats.llm == 25 and len(quiet_stub.requests) == 25
    assert quiet_stub.max_in_flight == 3


async def test_without_a_model_the_fallback_is_written_and_nothing_is_called(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    note(tmp_path, "items/go.md", "---\ntype: item\nsummary: Past tense of go\n---\n# Go\n\nwent\n")
    note(tmp_path, "items/be.md", "# Be\n\nwas, were, been\n")
    note(tmp_path, "events/2026/11/29.md", "# 2026-11-29\n\n## Event\nThe learner went out.\n")
    core = ready(tmp_path, cores)
    stats = await summaries_of(core).run_pass()
    assert (stats.folders, stats.fallback, stats.llm) == (5, 5, 0)
    assert quiet_stub.requests == []
    meta, body = summary_file(tmp_path, "items")
    assert set(meta) == {
        "id", "title", "type", "created", "updated", "abstract", "child_count",
        "categories", "children_digest", "generated_by",
    }  # fmt: skip
    assert meta["abstract"] == "2 notes: note, item" and meta["child_count"] == 2
    assert meta["categories"] == ["note", "item"] and meta["generated_by"] == "fallback"
    assert len(meta["children_digest"]) == 64 and meta["title"] == "items/"
    assert (
        body
        == "# Overview\n\n## note (1)\n- was, were, been…\n\n## item (1)\n- Past tense of go…\n"
    )
    root, root_body = summary_file(tmp_path, "")
    assert root["abstract"] == "2 notes: folder"
    assert root_body == "# Overview\n\n## folder (2)\n- 1 note: folder…\n- 2 notes: note, item…\n"
    day, _ = summary_file(tmp_path, "events/2026/11")
    assert day["abstract"] == "1 note: note"


# Notes opening with what is no prose (a fence, a table, HTML, math, a line of links),
# in several scripts, and the prose their abstract is.
NO_PROSE_FIRST = {
    "code.md": ("```python\nprint(1)\n```\n\nDas Skript druckt eins.\n", "Das Skript druckt eins."),
    "table.md": ("| a | b |\n|---|---|\n| 1 | 2 |\n\n表のメモです。\n", "表のメモです。"),
    "html.md": ('<div align="center">\n<img src="a.png">\n</div>\n\nयह नोट है।\n', "यह नोट है।"),
    "math.md": ("$$\nE = mc^2\n$$\n\nLa masse est de l'énergie.\n", "La masse est de l'énergie."),
    "links.md": ("[Home](index.md) | [Up](../x.md)\n\nGiriş sayfası.\n", "Giriş sayfası."),
}


def quoting_answer(request: dict[str, Any], turn: int) -> dict[str, Any]:
    """A model that says what it is shown: the children's abstracts."""
    children = request_data(request)["children"]
    abstract = "; ".join(child["abstract"] for child in children)
    return say(json.dumps({"abstract": abstract, "overview": f"# Contents\n\n{abstract}"}))


async def test_a_folders_summary_and_recall_quote_its_notes_prose_never_their_markup(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    """A note opening with a fence was listed ``- \\`\\`\\` print(1) \\`\\`\\`…`` in its
    folder's fallback overview; the model was shown that markup as the note's abstract,
    and recall's resident layer quoted the folder abstract it wrote of it."""
    for name, (text, _) in NO_PROSE_FIRST.items():
        note(tmp_path, f"docs/{name}", f"# {name}\n\n{text}")
    core = ready(tmp_path, cores)
    await summaries_of(core).run_pass()  # no model: the fallback
    _, body = summary_file(tmp_path, "docs")
    for _, prose in NO_PROSE_FIRST.values():
        assert f"- {prose}…" in body, body
    assert not any(markup in body for markup in ("\\`", "\\|", "$$", "\\<", "\\[")), body
    with_model = make_core(tmp_path, quiet_stub)
    cores.append(with_model)
    settle(with_model)
    quiet_stub.run(quoting_answer)
    await summaries_of(with_model).run_pass(force=True)
    shown = {c["abstract"] for r in quiet_stub.requests for c in request_data(r)["children"]}
    assert {prose for _, prose in NO_PROSE_FIRST.values()} <= shown
    assert with_model.recall is not None
    result = with_model.recall.recall("en", "", 1500, path="docs")
    resident = result["block"].split("\n## Recent\n")[0]  # (recent notes quote themselves)
    assert "### docs/.overview.md" in resident, result["block"]
    for _, prose in NO_PROSE_FIRST.values():
        assert prose in resident
    assert "```" not in resident and "$$" not in resident and "](" not in resident


async def test_a_forced_pass_without_a_model_keeps_the_models_current_summaries(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    """``indexer summarize --force`` from a shell without the server's model wrote the
    fallback over every summary the model made (and the server then made them again)."""
    note(tmp_path, "items/go.md", "# Go\n\nwent\n")
    with_model = make_core(tmp_path, quiet_stub)
    cores.append(with_model)
    settle(with_model)
    await summaries_of(with_model).run_pass()
    made = (vault(tmp_path) / "items" / ".overview.md").read_bytes()
    assert summary_file(tmp_path, "items")[0]["generated_by"] == "llm"
    without = make_core(tmp_path)
    cores.append(without)
    settle(without)
    stats = await summaries_of(without).run_pass(force=True)
    assert (vault(tmp_path) / "items" / ".overview.md").read_bytes() == made
    assert stats.fallback == 0 and stats.skipped == 2
    note(tmp_path, "items/be.md", "# Be\n\nwas\n")  # no longer current: the fallback
    settle(without)
    await summaries_of(without).run_pass(force=True)
    assert summary_file(tmp_path, "items")[0]["generated_by"] == "fallback"


async def test_a_zh_vault_gets_the_seeds_chinese_fallback(
    tmp_path: Path, cores: list[Core]
) -> None:
    note(
        tmp_path,
        "items/a.md",
        "---\ntype: preference\n---\n# 甲\n\n喜欢简洁的代码风格。\n",
        "zh-Hans",
    )
    core = ready(tmp_path, cores)
    await summaries_of(core).run_pass()
    meta, body = summary_file(tmp_path, "items", "zh-Hans")
    assert meta["abstract"] == "包含 1 条preference相关记忆"
    assert body == "# 目录内容概览\n\n## preference (1条)\n- 喜欢简洁的代码风格。...\n"


# -- incremental -----------------------------------------------------------------------


async def test_an_edit_deep_in_the_tree_redoes_only_its_ancestors(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    tree(tmp_path)
    core = make_core(tmp_path, quiet_stub)
    cores.append(core)
    settle(core)
    summaries = summaries_of(core)
    await summaries.run_pass()
    assert summaries.dirty.take() == {}  # the pass's own writes marked nothing
    quiet_stub.run(good_answer)
    untouched = snapshot(vault(tmp_path) / "t3")
    first, _ = summary_file(tmp_path, "t1/s2")

    core.vault.write("en", "t1/s2/n0.md", "# Note\n\nRewritten: now about sailing.\n")
    batch = summaries.dirty.take()
    assert batch == {"en": {"t1/s2", "t1", ""}}
    assert summaries.dirty.is_dirty("en", "t1")  # being worked on: stale until done
    stats = await summaries.run_pass(dirty=batch)
    summaries.dirty.done()
    assert sorted(asked_folders(quiet_stub)) == ["/", "t1/", "t1/s2/"]
    assert (stats.folders, stats.llm, stats.skipped) == (3, 3, 0)  # the others read as they are
    assert snapshot(vault(tmp_path) / "t3") == untouched
    again, body = summary_file(tmp_path, "t1/s2")
    assert "n0.md: Rewritten: now about sailing." in body
    assert (again["id"], again["created"]) == (first["id"], first["created"])
    assert again["abstract"] != first["abstract"]

    quiet_stub.run(good_answer)
    before = snapshot(vault(tmp_path))
    stats = await summaries.run_pass()  # nothing changed: no call, no write
    assert quiet_stub.requests == [] and (stats.skipped, stats.llm) == (25, 0)
    assert snapshot(vault(tmp_path)) == before


async def test_an_emptied_folder_loses_its_summary(tmp_path: Path, cores: list[Core]) -> None:
    note(tmp_path, "a/one.md", "# One\n\nfirst\n")
    note(tmp_path, "b/two.md", "# Two\n\nsecond\n")
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    await summaries.run_pass()
    assert (vault(tmp_path) / "a" / ".overview.md").exists()
    core.vault.delete("en", "a/one.md")
    stats = await summaries.run_pass(dirty=summaries.dirty.take())
    assert stats.removed == 1 and stats.fallback == 1  # a/ removed, the root redone
    assert not (vault(tmp_path) / "a" / ".overview.md").exists()
    assert summary_file(tmp_path, "")[0]["abstract"] == "1 note: folder"
    assert core.index is not None
    core.vault.delete("en", "b/two.md")
    assert set(core.index.folder_notes("en", "b")) == {".overview.md"}
    core.vault.delete("en", "b")  # the summary does not keep an emptied folder alive
    assert not (vault(tmp_path) / "b").exists() and core.index.folder_notes("en", "b") == {}
    stats = await summaries.run_pass(dirty=summaries.dirty.take())
    assert stats.removed == 1 and not (vault(tmp_path) / ".overview.md").exists()
    note(tmp_path, "c/d/three.md", "# Three\n\nthird\n")
    with pytest.raises(InvalidArgumentError):
        core.vault.delete("en", "c")  # a folder with more than its summary stays


async def test_a_summary_file_someone_deleted_is_made_again_with_its_parent(
    tmp_path: Path, cores: list[Core]
) -> None:
    note(tmp_path, "a/b/one.md", "# One\n\nfirst\n")
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    await summaries.run_pass()
    (vault(tmp_path) / "a" / "b" / ".overview.md").unlink()
    summaries.index_changed("en", "a/b/.overview.md", "watcher")  # as the watcher tells it
    batch = summaries.dirty.take()
    assert batch == {"en": {"a/b", "a", ""}}  # a/b too: removed by someone else
    stats = await summaries.run_pass(dirty=batch)
    assert stats.fallback == 1 and stats.skipped == 2  # a/b made again, a and root the same
    assert (vault(tmp_path) / "a" / "b" / ".overview.md").exists()


def summary_files(tmp_path: Path) -> dict[str, bytes]:
    """Every summary file of the en vault: (folder, its bytes)."""
    root = vault(tmp_path)
    return {str(p.parent.relative_to(root)): p.read_bytes() for p in root.rglob(".overview.md")}


async def test_the_watcher_telling_a_passs_own_writes_marks_nothing(
    tmp_path: Path, cores: list[Core]
) -> None:
    """The watcher syncs a summary the job just wrote before the job does at times (5 of
    a forced pass's 331 at 10,000 notes): told as a change by others, each folder was
    made again, as edited by hand. A summary changed since is still made again."""
    tree(tmp_path)
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    await summaries.run_pass()
    await summaries.run_pass(force=True)
    for folder in summary_files(tmp_path):
        rel = ".overview.md" if folder == "." else f"{folder}/.overview.md"
        summaries.index_changed("en", rel, "watcher")
    assert summaries.dirty.take() == {}
    summaries.dirty.done()
    path = vault(tmp_path) / "t1" / ".overview.md"
    path.write_text(path.read_text().replace("generated_by", "generated_by_hand"))
    summaries.index_changed("en", "t1/.overview.md", "watcher")
    assert summaries.dirty.take() == {"en": {"t1", ""}}


async def test_a_forced_pass_whose_writes_waited_is_not_made_again_when_idle(
    tmp_path: Path, cores: list[Core]
) -> None:
    """A pass's writes wait their turn in the jobs' threads (3.7 s at 10,000 notes, 112 s
    at the median at 100,000): the ``updated`` each said was its render's, over 5 s
    before its save, so each the watcher told as others' was taken for a hand edit and
    written again by the next passes (44 of 61 folders, 207 of 241). Here the threads
    are busy 6 s during a forced pass; then, idle, no pass rewrites anything."""
    tree(tmp_path)
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    await summaries.run_pass()
    loop = asyncio.get_running_loop()
    loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(2))
    busy = [loop.run_in_executor(None, time.sleep, 6) for _ in range(2)]
    forced = await summaries.run_pass(force=True)
    await asyncio.gather(*busy)
    assert forced.fallback == 25  # (every folder, the root among them)
    made = summary_files(tmp_path)
    for folder in made:
        found = summaries.files.read_summary("en", "" if folder == "." else folder)
        assert found is not None and not found.saved_after_written(), folder
    for folder in made:  # the watcher heard each write, some before the job's own sync
        rel = ".overview.md" if folder == "." else f"{folder}/.overview.md"
        summaries.index_changed("en", rel, "watcher")
    stats = await summaries.run_pass(dirty=summaries.dirty.take())
    summaries.dirty.done()
    assert stats.fallback == stats.llm == 0
    assert summary_files(tmp_path) == made


# -- errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        say("not json at all"),
        say('{"abstract": "only an abstract"}'),
        say('[{"abstract": "a", "overview": "b"}]'),
        say('{"abstract": 42, "overview": "b"}'),
        # zero-width characters alone: a summary that shows nothing, written "by the model"
        say('{"abstract": " \\u200b ", "overview": "\\u2060\\n\\ufeff"}'),
    ],
    ids=["text", "missing-overview", "array", "number", "invisible"],
)
async def test_a_malformed_answer_falls_back_and_is_retried_next_pass(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core], reply: dict[str, Any]
) -> None:
    note(tmp_path, "items/go.md", "# Go\n\nwent\n")
    core = make_core(tmp_path, quiet_stub)
    cores.append(core)
    settle(core)
    quiet_stub.run([reply])
    stats = await summaries_of(core).run_pass()
    assert (stats.fallback, stats.llm, stats.model_errors) == (2, 0, 2)
    assert summary_file(tmp_path, "items")[0]["generated_by"] == "fallback"
    quiet_stub.run(good_answer)  # the model works again: fallbacks are redone by it
    stats = await summaries_of(core).run_pass()
    assert (stats.llm, stats.fallback) == (2, 0)
    assert summary_file(tmp_path, "items")[0]["generated_by"] == "llm"


async def test_fallbacks_are_redone_once_the_model_answers_again(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    """After an outage only the folders of the next change got the model; the others
    kept the fallback until a restart. A pass where the model answers again is now
    followed by a full one, which redoes every fallback (and nothing else)."""
    folders = ["f0", "f1", "f2", ""]
    bad = [say("not json at all")]  # the model answers nonsense
    async with serving(tmp_path, quiet_stub, cores, folders[:3], bad) as (core, _):
        assert made_by(tmp_path, folders) == {"fallback"}
        quiet_stub.run(good_answer)  # good again
        core.vault.write("en", "f0/b.md", "# B\n\nanother\n")
        # f0 and the root for the change, then f1 and f2 (fallbacks) and the root above them
        expected = ["/", "/", "f0/", "f1/", "f2/"]
        await until(lambda: sorted(asked_folders(quiet_stub)) == expected, quiet_stub.requests)
        await until(lambda: made_by(tmp_path, folders) == {"llm"}, quiet_stub.requests)
        await asyncio.sleep(0.3)  # time for a pass too many
    assert sorted(asked_folders(quiet_stub)) == expected  # and nothing more


async def test_markdown_in_a_model_answer_cannot_break_the_frontmatter(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    note(tmp_path, "go.md", "# Go\n\nwent\n")
    evil = "---\ntype: item\nid: stolen\n---\n# Heading " + "x" * 300
    overview = "---\ngenerated_by: fallback\n---\n# Fine\n"
    quiet_stub.run([say(json.dumps({"abstract": evil, "overview": overview}))])
    core = make_core(tmp_path, quiet_stub)
    cores.append(core)
    settle(core)
    await summaries_of(core).run_pass()
    meta, body = summary_file(tmp_path, "")
    assert meta["type"] == "summary" and meta["generated_by"] == "llm" and meta["id"] != "stolen"
    assert meta["abstract"].startswith("--- type: item id: stolen --- # Heading x")
    assert len(meta["abstract"]) == 200
    assert body == "# Fine\n"  # (a block of its own, under the summary's, is no overview)


async def test_a_slow_model_times_out_into_the_fallback(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    note(tmp_path, "items/go.md", "# Go\n\nwent\n")
    quiet_stub.delay = 5.0
    core = make_core(tmp_path, quiet_stub, timeout=0.3)
    cores.append(core)
    settle(core)
    started = asyncio.get_running_loop().time()
    stats = await summaries_of(core).run_pass()
    took = asyncio.get_running_loop().time() - started
    assert took < 4.0  # not waiting for the answers (a loaded machine's pass: 2.4 s)
    assert (stats.fallback, stats.model_errors) == (2, 1)
    # never retried, nor asked again in the pass (0: a loaded machine's request had not
    # reached the stub within the 0.3 s)
    assert len(quiet_stub.requests) <= 1


async def test_a_model_that_gives_no_answer_is_asked_once_a_pass_not_once_a_level(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    """A hanging model cost its whole timeout at each level of a deep tree (31 levels at
    60 s: half an hour for a pass of fallbacks, every change waiting behind it), and so
    did one that refused every request (HTTP 500, 429, 401). A pass stops asking it once
    it gave no answer; an answer it gave, however bad, is no reason to stop."""
    deep = "/".join(f"d{n}" for n in range(12))
    note(tmp_path, f"{deep}/n.md", "# N\n\ndeep\n")
    note(tmp_path, "side/m.md", "# M\n\nbeside\n")
    quiet_stub.delay = 5.0
    core = make_core(tmp_path, quiet_stub, timeout=0.3, concurrency=1)
    cores.append(core)
    settle(core)
    started = asyncio.get_running_loop().time()
    stats = await summaries_of(core).run_pass()
    assert asyncio.get_running_loop().time() - started < 3  # (12 levels at 0.3 s: 3.9 s)
    assert (stats.folders, stats.fallback, stats.model_errors) == (14, 14, 1)
    assert len(quiet_stub.requests) <= 1  # (0: not at the stub within 0.3 s, under load)
    assert summary_file(tmp_path, deep)[0]["generated_by"] == "fallback"


async def test_a_model_that_refuses_is_asked_once_a_pass_and_again_when_it_answers(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    """A model refusing every request (HTTP 500, 429) is asked once a pass, not once a
    level; a refusal of this one request (400) is no reason to stop asking for the next.
    (Apart from the hanging model's test: its 0.3 s timeout made these answers time out
    under load, and a pass stop asking.)"""
    deep = "/".join(f"d{n}" for n in range(12))
    note(tmp_path, f"{deep}/n.md", "# N\n\ndeep\n")
    note(tmp_path, "side/m.md", "# M\n\nbeside\n")
    core = make_core(tmp_path, quiet_stub, concurrency=1)
    cores.append(core)
    settle(core)
    for reply in ([http_error(500, "boom")] * 20, [http_error(429, "slow down")] * 20):
        quiet_stub.run(reply)
        stats = await summaries_of(core).run_pass(force=True)
        assert (stats.model_errors, len(quiet_stub.requests)) == (1, 1)
    quiet_stub.run([http_error(400, "this prompt is too long")] * 20)  # this request's
    stats = await summaries_of(core).run_pass(force=True)
    assert stats.model_errors == len(quiet_stub.requests) == 14
    quiet_stub.run(good_answer)  # it answers again: the next pass asks it for every folder
    stats = await summaries_of(core).run_pass()
    assert (stats.llm, stats.model_errors, len(quiet_stub.requests)) == (14, 0, 14)


async def test_a_folder_of_500_children_shows_the_50_most_recent(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    for i in range(500):
        path = note(tmp_path, f"big/n{i:03d}.md", f"# N{i}\n\nnote number {i}\n")
        os.utime(path, ns=(1_700_000_000_000_000_000 + i * 10**9,) * 2)
    core = make_core(tmp_path, quiet_stub)
    cores.append(core)
    settle(core)
    await summaries_of(core).run_pass()
    (big,) = [request_data(r) for r in quiet_stub.requests if request_data(r)["folder"] == "big/"]
    assert big["child_count"] == 500 and big["children_shown"] == 50
    assert [c["name"] for c in big["children"]] == [f"n{i:03d}.md" for i in range(450, 500)]
    assert summary_file(tmp_path, "big")[0]["child_count"] == 500

    fallback_core = make_core(tmp_path / "plain")
    cores.append(fallback_core)
    for i in range(500):
        path = note(tmp_path / "plain", f"big/n{i:03d}.md", f"# N{i}\n\nnote number {i}\n")
        os.utime(path, ns=(1_700_000_000_000_000_000 + i * 10**9,) * 2)
    settle(fallback_core)
    await summaries_of(fallback_core).run_pass()
    meta, body = summary_file(tmp_path / "plain", "big")
    assert meta["child_count"] == 500 and meta["abstract"] == "500 notes: note"
    assert body.count("\n- ") == 50 and body.endswith("\n(450 more not listed)\n")
    assert "- note number 499…" in body and "- note number 449…" not in body


async def test_a_new_max_children_redoes_the_folders_it_cut_and_only_those(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    """A summary made while the setting showed 5 of 8 children said "(3 more not
    listed)" (the model saw 5) for good after the setting let it show all 8: the
    children were the same, so the folder was skipped as current."""
    for i in range(8):
        path = note(tmp_path, f"big/n{i}.md", f"# N{i}\n\nnote number {i}\n")
        os.utime(path, ns=(1_700_000_000_000_000_000 + i * 10**9,) * 2)
    note(tmp_path, "small/a.md", "# A\n\nalpha\n")
    for limit, shown in ((5, 5), (50, 8)):
        fallback = make_core(tmp_path, max_children=limit)
        cores.append(fallback)
        settle(fallback)
        await summaries_of(fallback).run_pass()
        meta, body = summary_file(tmp_path, "big")
        assert meta["child_count"] == 8 and body.count("\n- ") == shown, body
        assert ("more not listed" in body) == (shown < 8)
    with_model = make_core(tmp_path, quiet_stub, max_children=3)
    cores.append(with_model)
    settle(with_model)
    await summaries_of(with_model).run_pass()
    small = (vault(tmp_path) / "small" / ".overview.md").read_bytes()
    quiet_stub.requests.clear()
    again = make_core(tmp_path, quiet_stub, max_children=50)
    cores.append(again)
    settle(again)
    stats = await summaries_of(again).run_pass()
    # big, then the root (big's abstract is new); small, within both limits, is kept
    assert asked_folders(quiet_stub) == ["big/", "/"]
    assert request_data(quiet_stub.requests[0])["children_shown"] == 8
    assert (vault(tmp_path) / "small" / ".overview.md").read_bytes() == small
    assert stats.llm == 2 and stats.skipped == 1


async def test_notes_dated_in_the_far_future_are_not_the_most_recent_for_good(
    tmp_path: Path, cores: list[Core]
) -> None:
    """A note whose mtime a program set to 2446 was shown ahead of the 50 notes written
    after it, for good; its change time (the kernel's) places it."""
    far = note(tmp_path, "big/far.md", "# Far\n\nfrom a bad clock\n")
    os.utime(far, (2**40, 2**40))
    time.sleep(0.02)
    for i in range(50):
        note(tmp_path, f"big/n{i:02d}.md", f"# N{i}\n\nnote number {i}\n")
    core = make_core(tmp_path)
    cores.append(core)
    await summaries_of(core).run_pass()  # from the files (the index may not have them)
    assert "from a bad clock" not in summary_file(tmp_path, "big")[1]
    settle(core)
    await summaries_of(core).run_pass(force=True)  # from the index's rows
    body = summary_file(tmp_path, "big")[1]
    assert "from a bad clock" not in body and "- note number 0…" in body


async def test_notes_that_cannot_be_read_are_skipped_with_a_warning(
    tmp_path: Path, cores: list[Core], caplog: pytest.LogCaptureFixture
) -> None:
    note(tmp_path, "mixed/good.md", "# Good\n\nreadable\n")
    for folder in ("mixed", "broken"):
        (vault(tmp_path) / folder).mkdir(parents=True, exist_ok=True)
        (vault(tmp_path) / folder / "bad.md").write_bytes(b"# Bad\n\n\xff\xfe not text\n")
    core = ready(tmp_path, cores)
    with caplog.at_level(logging.WARNING, logger="indexer.jobs.summaries"):
        stats = await summaries_of(core).run_pass()
    assert stats.unreadable == 2
    assert "en/mixed/bad.md cannot be read: skipped" in caplog.text
    assert summary_file(tmp_path, "mixed")[0]["child_count"] == 1
    assert not (vault(tmp_path) / "broken" / ".overview.md").exists()  # nothing readable
    assert summary_file(tmp_path, "")[0]["child_count"] == 1  # broken/ is no child


async def test_the_pass_log_line_counts_in_words(
    tmp_path: Path, cores: list[Core], caplog: pytest.LogCaptureFixture
) -> None:
    """It said "summaries: 1 folders"."""
    note(tmp_path, "welcome.md", "# Welcome\n\nStart here.\n")
    core = ready(tmp_path, cores)
    with caplog.at_level(logging.INFO, logger="indexer.jobs.summaries"):
        assert await summaries_of(core)._logged_pass(None)
    assert "summaries: 1 folder in " in caplog.text
    assert "the model failed 0 times" in caplog.text


async def test_names_no_tool_can_use_are_left_out_and_break_nothing(
    tmp_path: Path, cores: list[Core]
) -> None:
    """A name that is not UTF-8 stopped every pass of the vault (an internal error, no
    summary ever again); names the tools refuse were counted and summarized."""
    note(tmp_path, "ok/a.md", "# A\n\nfine\n")
    root = bytes(vault(tmp_path))
    for name in (b"bad\xff", b"CON", b'q"uote', b"tab\tname"):
        os.makedirs(root + b"/" + name)
        Path(os.fsdecode(root + b"/" + name + b"/n.md")).write_text("# N\n\nhidden\n")
    Path(os.fsdecode(root + b"/ok/bad\xfe.md")).write_text("# B\n\nhidden\n")
    (vault(tmp_path) / "ok" / 'q"f.md').write_text("# Q\n\nhidden\n")
    deep = vault(tmp_path) / "/".join(["x"] * 40)
    deep.mkdir(parents=True)
    (deep / "n.md").write_text("# Deep\n\nhidden\n")
    core = ready(tmp_path, cores)
    await summaries_of(core).run_pass()
    assert summary_file(tmp_path, "ok")[0]["child_count"] == 1
    top = vault(tmp_path)
    written = sorted(str(p.parent.relative_to(top)) for p in top.rglob(".overview.md"))
    assert written == [".", "ok"]  # x/.../ holds no note a tool can reach
    assert summaries_of(core).summary("en", "")["child_count"] == 1


async def test_a_folder_whose_summary_path_would_be_too_long_gets_none(
    tmp_path: Path, cores: list[Core]
) -> None:
    """A folder's path of 1012-1023 bytes holds notes the tools reach, but its
    ``.overview.md`` (13 bytes more) was written where no tool could read or undo it."""
    top = "/".join(["f" * 200] * 5)  # 1004 bytes
    for tail in ("ab", "a" * 12, "a" * 7):  # 1007 bytes (summary: 1020), 1017 and 1012
        note(tmp_path, f"{top}/{tail}/n.md", "# N\n\nbody\n")
    core = ready(tmp_path, cores)
    await summaries_of(core).run_pass()
    root = vault(tmp_path)
    written = {str(p.relative_to(root)) for p in root.rglob(".overview.md")}
    assert f"{top}/ab/.overview.md" in written
    assert all(len(path.encode()) <= 1024 for path in written), sorted(written)
    for path in written:  # every one of them readable, and its history too
        assert core.vault.history("en", path)["versions"]


def test_the_folders_of_a_failed_pass_stay_dirty_until_the_next() -> None:
    dirty = DirtyFolders()
    dirty.mark("en", ["a", ""])
    dirty.take()
    dirty.done(failed=True)
    assert dirty.is_dirty("en", "a")  # its summary is said to be stale
    dirty.mark("en", ["b"])
    assert dirty.take() == {"en": {"a", "b", ""}}
    dirty.done()
    assert not dirty.is_dirty("en", "a")


async def pass_after_a_hand_edit(core: Core, folder: str) -> None:
    """The index finds a hand edit of the folder's summary (as the watcher or a restart
    does), which is then stale; the pass of the folders that marked runs."""
    assert core.index is not None
    core.index.reconcile()
    assert summaries_of(core).summary("en", folder)["stale"] is True
    await summaries_of(core).run_pass(dirty=summaries_of(core).dirty.take())
    summaries_of(core).dirty.done()


async def test_a_summary_edited_by_hand_is_made_again(tmp_path: Path, cores: list[Core]) -> None:
    """It was served as current (``stale: false``) until a note of its folder changed."""
    note(tmp_path, "f/a.md", "# A\n\nalpha\n")
    core = ready(tmp_path, cores)
    await summaries_of(core).run_pass()
    made = summary_file(tmp_path, "f")
    (vault(tmp_path) / "f" / ".overview.md").write_text("---\nabstract: HACKED\n---\nx\n")
    await pass_after_a_hand_edit(core, "f")
    again = summary_file(tmp_path, "f")
    assert again[1] == made[1] and again[0]["abstract"] == made[0]["abstract"] != "HACKED"


async def test_a_summary_whose_abstract_was_edited_is_made_again(
    tmp_path: Path, cores: list[Core]
) -> None:
    """An edit that kept the summary's fields (its children's digest too) was kept for
    good: its folder was marked, but the pass kept a summary whose children had not
    changed (README: "A summary you edited is made again")."""
    note(tmp_path, "f/a.md", "# A\n\nalpha\n")
    core = ready(tmp_path, cores)
    await summaries_of(core).run_pass()
    made = summary_file(tmp_path, "f")
    path = vault(tmp_path) / "f" / ".overview.md"
    edited = path.read_text().replace(made[0]["abstract"], "EDITED BY HAND")
    assert "EDITED BY HAND" in edited
    path.write_text(edited)
    later = path.stat().st_mtime + 60  # saved a minute after the job wrote it
    os.utime(path, (later, later))  # (a save moments after is taken for the job's own)
    await pass_after_a_hand_edit(core, "f")
    again = summary_file(tmp_path, "f")
    assert again[0]["abstract"] == made[0]["abstract"] != "EDITED BY HAND"
    assert summaries_of(core).summary("en", "f")["stale"] is False
    await summaries_of(core).run_pass()  # made once: kept again at the next pass
    assert summary_file(tmp_path, "f") == again


@pytest.mark.parametrize(
    "text",
    [
        "# My own notes on this folder\n\nwritten by hand\n",
        "---\ntags: [mine]\n---\nmine\n",
        "\xff\xfe",
        "# C\n\nI explain the field generated_by in my notes.\n",  # a word, not a field
        "---\nabstract: my own overview\n---\n# D\n",  # notes have abstracts too
        "---\ntitle: 'Reading list: https://example.com/docs/'\n---\nmine\n",  # not "empty/"
        "---\ngenerated_by: me, by hand\n---\nmine\n",
    ],
)
async def test_an_overview_written_by_hand_is_kept_as_a_note(
    tmp_path: Path, cores: list[Core], text: str
) -> None:
    """A ``.overview.md`` this job did not write (no summary fields) was deleted (folder
    without notes) or overwritten, and no tool reaches a dot-file: the user's text was
    gone. It becomes the note ``overview-by-hand.md``, then the summary is made."""
    data = text.encode("latin-1") if text == "\xff\xfe" else text.encode()
    (vault(tmp_path) / "empty").mkdir(parents=True)
    (vault(tmp_path) / "empty" / ".overview.md").write_bytes(data)
    note(tmp_path, "full/a.md", "# A\n\nalpha\n")
    (vault(tmp_path) / "full" / ".overview.md").write_bytes(data)
    (vault(tmp_path) / "full" / "overview-by-hand.md").write_text("# taken\n")
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    await summaries.run_pass()
    await summaries.run_pass(dirty=summaries.dirty.take())
    assert (vault(tmp_path) / "empty" / "overview-by-hand.md").read_bytes() == data
    assert (vault(tmp_path) / "full" / "overview-by-hand-2.md").read_bytes() == data
    assert (vault(tmp_path) / "full" / "overview-by-hand.md").read_text() == "# taken\n"
    readable = text != "\xff\xfe"  # a note not UTF-8 is no child a summary counts
    assert summary_file(tmp_path, "full")[0]["child_count"] == (3 if readable else 2)
    if readable:
        assert summary_file(tmp_path, "empty")[0]["child_count"] == 1
    for kept in ("empty/overview-by-hand.md", "full/overview-by-hand-2.md"):
        assert core.vault.read("en", kept)["size"] == len(data)


@pytest.mark.parametrize("kind", ["folder", "fifo", "huge"])
async def test_an_overview_the_job_cannot_replace_is_left_without_a_loop(
    tmp_path: Path, cores: list[Core], kind: str
) -> None:
    """A folder, a FIFO or a file past 4 MiB named ``.overview.md``: each pass met a
    conflict that marked the folder again, and the model was asked every debounce."""
    note(tmp_path, "f/a.md", "# A\n\nalpha\n")
    place = vault(tmp_path) / "f" / ".overview.md"
    if kind == "folder":
        place.mkdir()
    elif kind == "fifo":
        os.mkfifo(place)
    else:
        place.write_text("---\ntype: summary\n---\n" + "x" * (5 << 20))
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    await summaries.run_pass()
    assert summaries.dirty.take() == {}  # nothing marked again
    assert place.exists() and (kind != "huge" or place.stat().st_size > 5 << 20)


async def test_a_summary_cut_short_is_made_again_not_kept(
    tmp_path: Path, cores: list[Core]
) -> None:
    """Damaged (cut to its first lines, its YAML unterminated), it is still the job's."""
    note(tmp_path, "k/a.md", "# A\n\nalpha\n")
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    await summaries.run_pass()
    path = vault(tmp_path) / "k" / ".overview.md"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:3]))
    await summaries.run_pass(force=True)
    assert not (vault(tmp_path) / "k" / "overview-by-hand.md").exists()
    assert summary_file(tmp_path, "k")[0]["type"] == "summary"


async def test_a_hand_save_in_the_moment_a_kept_file_left_is_not_overwritten(
    tmp_path: Path, cores: list[Core], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor saving ``.overview.md`` right after it was kept aside (48 of 97 saves
    were lost that way): the summary is written only where nothing is, or over what was
    read; the new hand text is kept at the next pass."""
    from indexer.jobs import summary_files

    note(tmp_path, "b/a.md", "# A\n\nalpha\n")
    (vault(tmp_path) / "b" / ".overview.md").write_text("# first hand text\n")
    real = summary_files.renames.rename_noreplace

    def then_an_editor_saves(dir_fd: int, old: str, new: str) -> None:
        real(dir_fd, old, new)
        if old == ".overview.md":
            (vault(tmp_path) / "b" / ".overview.md").write_text("# second hand text\n")

    monkeypatch.setattr(summary_files.renames, "rename_noreplace", then_an_editor_saves)
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    await summaries.run_pass()
    assert (vault(tmp_path) / "b" / ".overview.md").read_text() == "# second hand text\n"
    monkeypatch.undo()
    await summaries.run_pass(dirty=summaries.dirty.take())  # the folder was marked again
    kept = {p.name: p.read_text() for p in (vault(tmp_path) / "b").glob("overview-by-hand*")}
    assert sorted(kept.values()) == ["# first hand text\n", "# second hand text\n"]
    assert summary_file(tmp_path, "b")[0]["type"] == "summary"


async def test_fallbacks_are_retried_on_a_timer_without_a_change(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a pass where the model answered started the retry of the folders it left
    with the fallback: with no change after the outage they kept it for good (a helper's
    run: 2.5 minutes of a working model, ten fallbacks, no request). Now the retry comes
    on a timer (1 minute, doubling while the model still fails)."""
    monkeypatch.setattr(summaries_module, "FIRST_RETRY_WAIT", 0.3)  # (60 s in use)
    monkeypatch.setattr(summaries_module, "MODEL_DOWN_WAIT", 0.3)  # (60 s in use)
    folders = ["f0", "f1", ""]
    down = [http_error(500, "down")]
    async with serving(tmp_path, quiet_stub, cores, folders[:2], down):
        assert made_by(tmp_path, folders) == {"fallback"}
        asked = len(quiet_stub.requests)  # (f0 and f1 at once, or only the first)
        await until(lambda: len(quiet_stub.requests) > asked, quiet_stub.requests)  # again
        quiet_stub.run(good_answer)  # back; nothing is written meanwhile
        await until(lambda: made_by(tmp_path, folders) == {"llm"}, quiet_stub.requests)
        asked = len(quiet_stub.requests)
        await asyncio.sleep(1.5)  # every folder by the model: no retry more
    assert len(quiet_stub.requests) == asked == 3


async def test_a_model_that_gave_no_answer_is_not_asked_at_every_change(
    tmp_path: Path,
    quiet_stub: LLMStub,
    cores: list[Core],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """After a model gave no answer at all, the pass of every later change asked it again,
    each waiting its whole timeout for a hanging one (a helper's run: until the retry).
    Changes within a minute of it get the fallback without asking; after it, the next
    change asks (and, answered, starts the retry of the fallbacks)."""
    monkeypatch.setattr(summaries_module, "MODEL_DOWN_WAIT", 1.5)  # (60 s in use)
    caplog.set_level(logging.INFO, "indexer.jobs.summaries")
    down = [http_error(503, "overloaded")]
    async with serving(tmp_path, quiet_stub, cores, ["f0"], down) as (core, summaries):
        assert len(quiet_stub.requests) == 1 and made_by(tmp_path, ["f0", ""]) == {"fallback"}
        started = time.monotonic()
        for n in (1, 2):
            core.vault.write("en", f"f{n}/a.md", f"# A{n}\n\nnote {n}\n")
            await until(lambda: (vault(tmp_path) / f"f{n}" / ".overview.md").exists(), n)  # noqa: B023
        assert time.monotonic() - started < 1.2
        assert len(quiet_stub.requests) == 1  # (three before: one for each change)
        assert "removed; the model not asked: it gave no answer lately)" in caplog.text
        assert made_by(tmp_path, ["f0", "f1", "f2", ""]) == {"fallback"}
        await asyncio.sleep(max(0.0, started + 1.6 - time.monotonic()))
        quiet_stub.run(good_answer)
        core.vault.write("en", "f3/a.md", "# A3\n\nnote 3\n")
        folders = ["f0", "f1", "f2", "f3", ""]
        await until(lambda: made_by(tmp_path, folders) == {"llm"}, quiet_stub.requests)
        assert summaries.last_pass is not None and summaries.last_pass.model_errors == 0


async def test_a_model_that_answered_summarize_is_asked_at_the_next_change(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    """`indexer summarize` beside the server (``asked_pass``) got the model's answers,
    yet the changes of the next minute got the fallback ("the model not asked: it gave
    no answer lately"), over the summaries that pass had just made by the model."""
    down = [http_error(503, "overloaded")]
    async with serving(tmp_path, quiet_stub, cores, ["f0"], down) as (core, summaries):
        assert made_by(tmp_path, ["f0", ""]) == {"fallback"}
        quiet_stub.run(good_answer)
        stats = await summaries.asked_pass(None, force=False)
        assert (stats.llm, stats.model_errors) == (2, 0)
        core.vault.write("en", "f1/a.md", "# A1\n\nnote 1\n")
        folders = ["f0", "f1", ""]
        await until(
            lambda: made_by(tmp_path, folders) == {"llm"},
            lambda: (made_by(tmp_path, folders), asked_folders(quiet_stub)),
            10,
        )


async def test_a_refusal_s_retry_after_holds_the_model_off(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 429 with ``Retry-After`` was asked again at the next change and the next retry
    (40 requests in 27 s against ``Retry-After: 3600``): it now holds both off as long."""
    monkeypatch.setattr(summaries_module, "FIRST_RETRY_WAIT", 0.2)
    monkeypatch.setattr(summaries_module, "MODEL_DOWN_WAIT", 0.2)
    limited = RawReply(429, {"error": {"message": "rate limited"}}, headers={"Retry-After": "2"})
    async with serving(tmp_path, quiet_stub, cores, ["f0"], [limited]) as (core, _):
        started = time.monotonic()
        core.vault.write("en", "f1/a.md", "# A1\n\nnote 1\n")
        await until(lambda: (vault(tmp_path) / "f1" / ".overview.md").exists(), "f1")
        await asyncio.sleep(0.8)  # past the retry's and the down wait's own times
        assert len(quiet_stub.requests) == 1
        quiet_stub.run(good_answer)
        folders = ["f0", "f1", ""]
        await until(lambda: made_by(tmp_path, folders) == {"llm"}, quiet_stub.requests)
        assert time.monotonic() - started >= 1.5


async def test_a_folder_the_model_always_fails_is_not_asked_at_every_change(
    tmp_path: Path, quiet_stub: LLMStub, cores: list[Core]
) -> None:
    """A full pass retried the fallbacks after every pass where the model answered, and
    wrote an identical fallback (a history version) each time."""

    def fails_on_bad(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if request_data(request)["folder"] == "bad/":
            return say("not json at all")
        return good_answer(request, turn)

    async with serving(tmp_path, quiet_stub, cores, ["bad", "a"], fails_on_bad) as (core, _):
        for n in range(3):
            core.vault.write("en", f"a/n{n}.md", f"# N{n}\n\nnote {n}\n")
            await until(lambda: asked_folders(quiet_stub).count("a/") >= n + 2, quiet_stub.requests)  # noqa: B023
            await asyncio.sleep(0.5)
    # the start-up pass, then one retry after the first change; none after the others
    assert asked_folders(quiet_stub).count("bad/") == 2, asked_folders(quiet_stub)
    store = core.vault.recorder.store
    assert store is not None  # the fallback written once, not again when it failed again
    assert len(store.versions("en", "bad/.overview.md", 10)) == 1


# -- reading ---------------------------------------------------------------------------


async def test_summary_reads_a_folder_and_previews_one_not_made_yet(
    tmp_path: Path, cores: list[Core]
) -> None:
    note(tmp_path, "items/go.md", "# Go\n\nwent\n")
    (vault(tmp_path) / "empty").mkdir()
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    before = snapshot(tmp_path / "ws" / "memory")
    preview = await asyncio.to_thread(summaries.summary, "en", "./items/")
    assert preview == {
        "path": "items",
        "abstract": "1 note: note",
        "overview": "# Overview\n\n## note (1)\n- went…\n",
        "child_count": 1,
        "categories": ["note"],
        "generated_by": "fallback",
        "updated": None,
        "stale": True,
    }
    assert snapshot(tmp_path / "ws" / "memory") == before  # a preview writes nothing
    await summaries.run_pass()
    made = await asyncio.to_thread(summaries.summary, "en")
    assert made["path"] == "" and made["abstract"] == "1 note: folder"
    assert made["stale"] is False and made["updated"].endswith("Z")
    core.vault.write("en", "items/be.md", "# Be\n\nwas\n")
    assert (await asyncio.to_thread(summaries.summary, "en", "items"))["stale"] is True
    for path, error in [
        ("empty", NotFoundError),
        ("nowhere", NotFoundError),
        ("items/go.md", InvalidArgumentError),
        ("../x", ForbiddenPathError),
        (".indexer", ForbiddenPathError),
    ]:
        with pytest.raises(error):
            await asyncio.to_thread(summaries.summary, "en", path)
    assert most_recent([], 50) == [] and fallback_overview("en", []) == "# Overview\n"


async def test_a_preview_is_kept_until_a_change_below_its_folder(
    tmp_path: Path, cores: list[Core]
) -> None:
    """A folder without a summary file (no pass yet, or a vault where none can be
    written) is previewed once with every folder below it, not at every call; a change
    below a folder, by a tool or from outside, shows in its next preview."""
    tree(tmp_path)
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    root = await asyncio.to_thread(summaries.summary, "en")
    assert root["child_count"] == 5 and root["stale"] is True
    for folder in ["", "t0", "t0/s0", "t3/s4"]:  # kept with the root's: none made again
        assert summaries.previews.get("en", folder)[0], folder
    t0 = await asyncio.to_thread(summaries.summary, "en", "t0/s0")
    assert t0["child_count"] == 2

    core.vault.write("en", "t0/s0/new.md", "# New\n\nthird\n")
    assert not summaries.previews.get("en", "t0")[0]
    assert summaries.previews.get("en", "t1")[0]  # not above the change: still kept
    assert (await asyncio.to_thread(summaries.summary, "en", "t0/s0"))["child_count"] == 3
    note(tmp_path, "t1/s1/outside.md", "# Outside\n\nfrom another program\n")
    note(tmp_path, "t9/only.md", "# Only\n\na new folder\n")
    assert core.index is not None
    core.index.reconcile()  # (the watcher's way in: the index tells what changed)
    assert (await asyncio.to_thread(summaries.summary, "en", "t1/s1"))["child_count"] == 3
    again = await asyncio.to_thread(summaries.summary, "en")
    assert again["child_count"] == 6 and again["overview"].count("1 note: note") == 1


def test_a_preview_made_across_a_change_is_not_kept() -> None:
    previews = Previews()
    made = Summary("a", "abstract", "overview", 1, ["note"], "digest", "fallback")
    since = previews.epoch()
    previews.forget("en", ["a/b", "a", ""])  # a change while the preview was made
    previews.keep("en", {"a": made}, since)
    assert previews.get("en", "a") == (False, None)
    previews.keep("en", {"a": made, "a/empty": None}, previews.epoch())
    assert previews.get("en", "a") == (True, made)
    assert previews.get("en", "a/empty") == (True, None)  # previewed: no notes below
    assert previews.get("zh", "a") == (False, None)
    previews.forget("en", ["a"])
    assert previews.get("en", "a") == (False, None)
    previews.keep("en", {"a.assets": made, "a/.hidden": made}, previews.epoch())
    assert previews.get("en", "a.assets") == previews.get("en", "a/.hidden") == (False, None)
    small = Previews(limit=2 * (ENTRY_CHARS + len("abstract") + len("overview")))
    small.keep("en", {"x": made, "y": made, "z": made}, small.epoch())
    assert [small.get("en", f)[0] for f in "xyz"] == [False, True, True]
    small.keep("en", {"y": made}, small.epoch())  # kept again: counted once
    assert [small.get("en", f)[0] for f in "xyz"] == [False, True, True]


async def test_a_moved_folder_is_summarized_again_under_its_new_name(
    tmp_path: Path, cores: list[Core]
) -> None:
    note(tmp_path, "old/one.md", "# One\n\nfirst\n")
    core = ready(tmp_path, cores)
    summaries = summaries_of(core)
    await summaries.run_pass()
    os.rename(vault(tmp_path) / "old", vault(tmp_path) / "new")  # its summary moves with it
    assert core.index is not None
    core.index.reconcile()  # what the watcher would do: every moved note marks its folders
    stats = await summaries.run_pass(dirty=summaries.dirty.take())
    assert stats.fallback == 2  # new/ (its title) and the root (its child's name)
    assert summary_file(tmp_path, "new")[0]["title"] == "new/"
    assert "- 1 note: note…" in summary_file(tmp_path, "")[1]


async def test_a_summary_is_recorded_under_its_file_lock(tmp_path: Path, cores: list[Core]) -> None:
    """The watcher records a change made beside the job (``indexer summarize`` while
    served) under the file's lock; the job recorded its own summary without it: both took
    the same next version, and one failed (UNIQUE constraint failed: versions.path_id,
    versions.version), the whole summaries pass or the record of the change."""
    note(tmp_path, "a/n.md", "# N\n\nA note.\n")
    core = ready(tmp_path, cores)
    lock = core.vault.file_lock("en", "a/.overview.md")
    lock.acquire()
    try:
        task = asyncio.ensure_future(summaries_of(core).run_pass())
        await asyncio.sleep(1.0)
        assert not (vault(tmp_path) / "a" / ".overview.md").exists()  # waits for the lock
    finally:
        lock.release()
    await asyncio.wait_for(task, 30)
    assert summary_file(tmp_path, "a")[0]["type"] == "summary"
    assert core.vault.history("en", "a/.overview.md")["versions"]


async def test_a_pass_the_disk_refuses_warns_per_folder_and_a_later_pass_writes(
    tmp_path: Path, cores: list[Core], caplog: pytest.LogCaptureFixture
) -> None:
    """A full disk reaches the job as StorageError (history's or the file's write), not
    OSError: the whole pass failed with a traceback, cutting off the folders beside
    the one that met it. Now each folder warns and the pass ends; once there is room,
    the next pass writes them."""
    note(tmp_path, "a/n.md", "# N\n\nA note.\n")
    note(tmp_path, "b/m.md", "# M\n\nAnother note.\n")
    core = ready(tmp_path, cores)
    store = core.vault.recorder.store
    assert store is not None
    for conn in store._connections:  # SQLite refuses every history write, as on a full disk
        conn.execute("PRAGMA query_only = 1")
    with caplog.at_level(logging.WARNING, logger="indexer.jobs.summaries"):
        stats = await summaries_of(core).run_pass()
    assert stats.folders == 3
    refused = [r.getMessage() for r in caplog.records if "cannot write the summary" in r.message]
    assert len(refused) == 3 and all("the history could not record" in m for m in refused)
    assert not list(vault(tmp_path).rglob(".overview.md"))
    for conn in store._connections:
        conn.execute("PRAGMA query_only = 0")
    await summaries_of(core).run_pass()
    assert {summary_file(tmp_path, f)[0]["type"] for f in ("a", "b", "")} == {"summary"}
