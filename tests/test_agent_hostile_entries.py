"""Hostile entries, actions, settings and arguments are refused by the agent client
itself, before anything is queued or sent: text that is not UTF-8 (a lone surrogate
used to kill the MCP session and drop the rest of the batch as "indexer offline"), a
title with a line break other than ``\\n``, one string where a list belongs, and
settings or numbers no call could run with. Nothing reaches the vault."""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers.indexer_process import RunningIndexer

from agent_client.cli import main
from agent_client.hooks import entry_from_mapping, remember_turn, run_memory_writer_action
from agent_client.notices import CollectingNoticeSink
from agent_client.settings import ClientSettings, LLMSettings
from agent_client.writer import MemoryWriter
from indexer.cli import main as indexer_main
from shared.errors import ConfigError
from shared.models import DeleteAction, EditAction, MemoryEntry

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
LONE = json.loads('"\\ud800"')  # what a model's JSON can hand over
ESCAPED = b"\xff".decode("utf-8", "surrogateescape")  # what argv holds for a non-UTF-8 byte
LINE_BREAKS = ["\n", "\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
_langs = itertools.count()


@pytest.fixture
def lang() -> str:
    return f"en-h{next(_langs):03d}"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI reads its settings from the environment; keep the host's out of it.
    for name in list(os.environ):
        if name.startswith("AGENT_CLIENT_") or name in ("VAULT_LLM_MODEL", "OPENAI_BASE_URL"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("AGENT_CLIENT_TZ", "UTC")


@pytest.fixture
def writer(server: RunningIndexer) -> Iterator[tuple[MemoryWriter, CollectingNoticeSink]]:
    sink = CollectingNoticeSink()
    w = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC), sink)
    yield w, sink
    w.close()


def entry(
    lang: str = "en",
    title: str = "Title",
    content: str = "content",
    kind: str = "knowledge",
    **kw: Any,
) -> MemoryEntry:
    return MemoryEntry(lang, kind, title, content, timestamp=T0, **kw)


def notes(server: RunningIndexer, lang: str) -> list[str]:
    """Every file in the vault of ``lang`` (none when the vault was never written)."""
    vault = server.workspace / "memory" / "languages" / lang / "vault"
    return sorted(str(p.relative_to(vault)) for p in vault.rglob("*") if p.is_file())


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- validate(): text that is not UTF-8 -------------------------------------------------


@pytest.mark.parametrize(
    "fields",
    [
        {"title": f"a {LONE} b"},
        {"content": f"x {LONE} y"},
        {"content": f"x {ESCAPED} y"},
        {"tags": ["fine", f"t{LONE}"]},
        {"images": [f"/tmp/pic{ESCAPED}.png"]},
    ],
    ids=["title", "content", "content-argv", "tag", "image"],
)
def test_an_entry_with_a_lone_surrogate_is_refused(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="not valid UTF-8 text"):
        entry(**fields).validate()


@pytest.mark.parametrize(
    "action",
    [
        DeleteAction("en", f"items/a{LONE}.md"),
        EditAction("en", f"items/a{LONE}.md", body="new"),
        EditAction("en", "items/a.md", body=f"new {LONE}"),
        EditAction("en", "items/a.md", frontmatter={f"k{LONE}": 1}),
        EditAction("en", "items/a.md", frontmatter={"k": {"deep": [f"v{ESCAPED}"]}}),
    ],
    ids=["delete-path", "edit-path", "body", "frontmatter-key", "frontmatter-nested-value"],
)
def test_an_action_with_a_lone_surrogate_is_refused(action: DeleteAction | EditAction) -> None:
    with pytest.raises(ValueError, match="not valid UTF-8 text"):
        action.validate()


def test_the_message_shows_the_surrogate_escaped() -> None:
    with pytest.raises(ValueError) as refused:
        entry(title=f"ab{LONE}").validate()
    message = str(refused.value)
    assert "title" in message and "\\ud800" in message and "index 2" in message
    message.encode("utf-8")  # printable and loggable as it is


# -- validate(): titles are one line ---------------------------------------------------


@pytest.mark.parametrize("brk", LINE_BREAKS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKS])
def test_a_title_with_any_line_break_is_refused(brk: str) -> None:
    with pytest.raises(ValueError, match="one line"):
        entry(title=f"a{brk}b # c").validate()
    entry(title="a\tb # c").validate()  # a tab is no line break (reasons turn it to a space)


@pytest.mark.parametrize("brk", LINE_BREAKS, ids=[f"U+{ord(c):04X}" for c in LINE_BREAKS])
def test_a_tag_with_any_line_break_is_refused(brk: str) -> None:
    """An event's tags are written on its ``- tags:`` line: a line break in one wrote a
    whole section, whose forged ``- entry:`` line made the writer's retry of that entry
    take it as logged already (and drop it)."""
    forged = f"work{brk}{brk}## Event{brk}{brk}- entry: victim-1{brk}"
    for kind in ("event", "knowledge"):
        with pytest.raises(ValueError, match="tag 2 must be one line"):
            entry(kind=kind, tags=["ok", forged]).validate()


@pytest.mark.parametrize(
    ("tag", "said"),
    [
        ("nul\x00x", "control character"),
        ("tab\tx", "control character"),
        ("\x1b[31mred", "control character"),
        ("\u200b\u2060", "shows nothing"),
        ("x" * 257, "at most 256"),
    ],
)
def test_a_tag_that_is_not_one_plain_line_is_refused(tag: str, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        entry(tags=[tag]).validate()
    entry(tags=["plain tag", "ไทย", "x" * 256]).validate()


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"title": "null\x00title"}, "control character"),
        ({"title": "red \x1b[31mtext"}, "control character"),
        ({"title": "gpj.\u202eexe"}, "control character"),
        ({"title": "\u200b"}, "shows nothing"),
        ({"title": "\u200b\u2060 \u3164"}, "shows nothing"),
        ({"content": "a\x00b"}, "NUL"),
        ({"title": "\u2800"}, "shows nothing"),  # the braille blank
        ({"title": "\u0301\u0308"}, "shows nothing"),  # marks alone
        ({"title": "\U00016fe4"}, "shows nothing"),  # Khitan filler
        ({"title": "abc\u2067def"}, "control character"),  # an isolate
        ({"title": "\uffff\ufdd0"}, "shows nothing"),  # noncharacters
        ({"title": "\U000e0000"}, "shows nothing"),  # unassigned, in the tag plane
    ],
    ids=[
        *("nul", "escape", "bidi-override", "zwsp", "invisible-letters", "content-nul"),
        *("braille-blank", "marks", "khitan-filler", "isolate", "noncharacters", "tag-plane"),
    ],
)
def test_text_a_note_cannot_hold_is_refused(fields: dict[str, Any], said: str) -> None:
    """They were written into the note as they were: a NUL made git and grep take it for
    binary, a lone override turned the heading around, a title showed nothing."""
    with pytest.raises(ValueError, match=said):
        entry(**fields).validate()
    entry(title="כותרת עברית ok \ue000", content="tab\tand\x1b escape kept").validate()
    for title in ("नमस्ते", "👩‍👩‍👧", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "ᠮᠣᠩᠭᠣᠯ", "می‌خواهم", "a\tb", "🩷", "\U00031350"):
        entry(title=title).validate()


def test_an_edit_may_remove_the_title_or_set_a_number() -> None:
    """None removes a key (``--unset title``), and ``--set title=2024`` a number: both
    were refused as 'the title must be a non-empty string'."""
    EditAction("en", "items/a.md", frontmatter={"title": None}).validate()
    EditAction("en", "items/a.md", frontmatter={"title": 2024}).validate()
    names = {"tags": ["ภาษาไทย", "עברית", 7, None, " "], "aliases": "a, b", "type": ""}
    EditAction("en", "items/a.md", frontmatter={**names, "note": "two\nlines"}).validate()
    EditAction("en", "items/a.md", frontmatter={"odd\u202e": None}).validate()  # removed


async def test_an_edit_sets_no_key_a_reader_cannot_see_as_typed(
    server: RunningIndexer, writer: tuple[MemoryWriter, CollectingNoticeSink], lang: str
) -> None:
    """A key of a bidi override, a line break or nothing visible was written as asked
    (``k\u202e: v`` reads ``v :k`` in an editor); one a person wrote may still go."""
    w, _ = writer
    path = server.workspace / "memory" / "languages" / lang / "vault" / "items" / "keys.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\ntitle: Keys\nodd\u202e: 1\n---\n# Keys\n")
    before = path.read_bytes()
    for key in ("level\u202e", "two\nlines", "\u200b"):
        asked = {"action": "edit", "path": "items/keys.md", "frontmatter": {key: 1}}
        result = await run_memory_writer_action(asked, writer=w, lang=lang)
        assert isinstance(result, str) and result.startswith("invalid_argument: edit: the ")
        assert path.read_bytes() == before
    gone = {"action": "edit", "path": "items/keys.md", "frontmatter": {"odd\u202e": None}}
    result = await run_memory_writer_action(gone, writer=w, lang=lang)
    assert isinstance(result, dict) and result["action"] == "edited"
    assert "\u202e" not in path.read_text() and "title: Keys" in path.read_text()


@pytest.mark.parametrize(
    "action",
    [
        EditAction("en", "items/a.md", body="a\x00b"),
        EditAction("en", "items/a.md", frontmatter={"title": "\u202egpj.exe"}),
        EditAction("en", "items/a.md", frontmatter={"title": "\u2800"}),
        EditAction("en", "items/a.md", frontmatter={"note": "nul\x00"}),
        EditAction("en", "items/a.md", frontmatter={"title": "a\u2028b"}),
        EditAction("en", "items/a.md", frontmatter={"title": "x" * 3000}),
        EditAction("en", "items/a.md", frontmatter={"tags": ["ok", "evil\u202etxt.exe"]}),
        EditAction("en", "items/a.md", frontmatter={"tags": "bell\x07"}),
        EditAction("en", "items/a.md", frontmatter={"aliases": ["two\nlines"]}),
        EditAction("en", "items/a.md", frontmatter={"type": "\u2066item"}),
        EditAction("en", "items/a.md", frontmatter={"tags": ["\u200b"]}),
        EditAction("en", "items/a.md", frontmatter={"level\u202e": 1}),
        EditAction("en", "items/a.md", frontmatter={"two\nlines": 1}),
        EditAction("en", "items/a.md", frontmatter={"\u200b": "x"}),
        EditAction("en", "items/a.md", frontmatter={"esc\x1b[2J": "x"}),
    ],
    ids=[
        *("body-nul", "title-override", "title-blank", "value-nul", "title-break", "title-long"),
        *("tag-override", "tag-bell", "alias-break", "type-isolate", "tag-blank"),
        *("key-override", "key-break", "key-blank", "key-escape"),
    ],
)
def test_an_edit_holding_what_an_entry_may_not_is_refused(action: EditAction) -> None:
    """The edit route wrote a NUL body, or an overridden or blank title, as it was."""
    with pytest.raises(ValueError, match=r"NUL|control character|shows nothing|one line"):
        action.validate()


# -- lists: one string is not a list of letters ---------------------------------------


@pytest.mark.parametrize("key", ["tags", "images"])
def test_a_string_where_a_list_belongs_is_refused(key: str) -> None:
    data = {"lang": "en", "kind": "knowledge", "title": "t", "content": "c"}
    with pytest.raises(ValueError, match=f"{key} must be a list of strings"):
        entry_from_mapping({**data, key: "grammar"})
    with pytest.raises(ValueError, match=f"{key} must hold strings only"):
        entry_from_mapping({**data, key: ["ok", 5]})
    with pytest.raises(ValueError, match=f"{key} must be a list"):
        entry(**{key: "grammar"}).validate()  # a MemoryEntry built by hand, too
    assert getattr(entry_from_mapping({**data, key: ["a", "b"]}), key) == ["a", "b"]
    assert getattr(entry_from_mapping({**data, key: None}), key) == []


def test_an_empty_id_is_refused_not_replaced() -> None:
    """An empty id was taken as "no id" and queued under a new one; the README says 1-128."""
    data = {"lang": "en", "kind": "event", "title": "t", "content": "c"}
    receipt = remember_turn([{**data, "id": ""}], writer=None)
    assert receipt.queued == [] and "id must be 1-128" in receipt.refused[0]
    assert entry_from_mapping({**data, "id": None}).id  # null is "no id": one is made
    assert entry_from_mapping({**data, "id": "a-1"}).id == "a-1"


def test_remember_turn_lists_the_refusal_and_queues_the_rest() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.batches: list[list[MemoryEntry]] = []

        def submit(self, entries: list[MemoryEntry]) -> None:
            self.batches.append(entries)

    recorder = Recorder()
    base = {"kind": "knowledge", "content": "c"}
    receipt = remember_turn(
        [
            {**base, "title": "tags as text", "tags": "grammar"},
            {**base, "title": f"lone {LONE}"},
            {**base, "title": "carriage\rreturn"},
            {**base, "title": "fine", "tags": ["grammar"]},
        ],
        writer=recorder,  # type: ignore[arg-type]
        lang="en",
    )
    assert len(receipt.queued) == 1 and len(receipt.refused) == 3
    assert [e.title for e in recorder.batches[0]] == ["fine"]
    assert [r.split(":")[0] for r in receipt.refused] == ["entry 1", "entry 2", "entry 3"]


# -- settings ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AGENT_CLIENT_TZ", "Not/AZone"),
        ("AGENT_CLIENT_TZ", "America"),
        ("AGENT_CLIENT_TZ", "../../etc/passwd"),
        ("AGENT_CLIENT_CALL_TIMEOUT", "inf"),
        ("AGENT_CLIENT_CALL_TIMEOUT", "nan"),
        ("AGENT_CLIENT_CALL_TIMEOUT", "0"),
        ("AGENT_CLIENT_CONNECT_TIMEOUT", "-1"),
        ("AGENT_CLIENT_CONNECT_TIMEOUT", "soon"),
        ("AGENT_CLIENT_LLM_TIMEOUT", "inf"),
        ("AGENT_CLIENT_LLM_REQUEST_TIMEOUT", "1e300"),
        ("AGENT_CLIENT_LLM_MAX_STEPS", "0"),
        ("AGENT_CLIENT_LLM_MAX_TOKENS", "many"),
        ("AGENT_CLIENT_MAX_IMAGE_BYTES", "-5"),
    ],
)
def test_a_bad_setting_is_a_config_error_naming_it(tmp_path: Path, name: str, value: str) -> None:
    env = {"AGENT_CLIENT_WORKSPACE": str(tmp_path), "VAULT_LLM_MODEL": "m", name: value}
    with pytest.raises(ConfigError, match=name):
        ClientSettings.resolve({}, env)


def test_settings_built_by_hand_are_checked_too(tmp_path: Path) -> None:
    for bad in (math.inf, math.nan, 0, -1.0, True):
        with pytest.raises(ConfigError, match="call_timeout"):
            ClientSettings(workspace=tmp_path, call_timeout=bad)
        with pytest.raises(ConfigError, match="timeout"):
            LLMSettings(model="m", timeout=bad)
    with pytest.raises(ValueError, match="max_steps"):  # ConfigError is a ValueError
        LLMSettings(model="m", max_steps=0)
    assert ClientSettings(workspace=tmp_path, connect_timeout=1).connect_timeout == 1


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AGENT_CLIENT_TZ", "Not/AZone"),
        ("AGENT_CLIENT_CALL_TIMEOUT", "inf"),
        ("AGENT_CLIENT_LLM_TIMEOUT", "inf"),
    ],
)
def test_the_cli_says_what_setting_is_bad_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    env = {"VAULT_LLM_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1", name: value}
    proc = subprocess.run(
        [sys.executable, "-m", "agent_client", "event", "--title", "t", "body"],
        env={
            **os.environ,
            **env,
            "AGENT_CLIENT_WORKSPACE": str(tmp_path),
            "AGENT_CLIENT_LANG": "en",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and name in proc.stderr and "Traceback" not in proc.stderr


# -- CLI numbers: bad usage, refused before connecting ----------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "x", "--limit", "-5"],
        ["search", "x", "--limit", "0"],
        ["search", "x", "--limit", "101"],  # (the server's refusal exited 1, not 2)
        ["search", "x", "--offset", "-1"],
        ["history", "items/a.md", "--show", "-1"],
        ["history", "items/a.md", "--diff", "0"],
        ["history", "items/a.md", "--diff", "1", "--to", "0"],
        ["history", "items/a.md", "--show", "99999999999999999999999"],
    ],
)
def test_bad_numbers_are_bad_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    with pytest.raises(SystemExit) as exited:  # no indexer: a later check would exit 3
        main([*argv, "--workspace", str(tmp_path), "--lang", "en"])
    assert exited.value.code == 2
    assert "whole number" in capsys.readouterr().err


@pytest.mark.parametrize("first", ["--workspace", "--lang=en", "-x"])
def test_an_option_before_the_command_says_where_options_go(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], first: str
) -> None:
    """``agent-client --workspace W recall q`` read as a command named W before."""
    with pytest.raises(SystemExit) as exited:
        main([first, str(tmp_path), "recall", "hello"])
    assert exited.value.code == 2
    assert "options go after the command" in capsys.readouterr().err


def test_the_indexer_says_where_options_go_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        indexer_main(["--workspace", str(tmp_path), "status"])
    assert exited.value.code == 2
    assert "options go after the command: indexer COMMAND --workspace" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        indexer_main(["--help"])
    assert exited.value.code == 0
    capsys.readouterr()
    for run, name in ((indexer_main, "indexer"), (main, "agent-client")):
        with pytest.raises(SystemExit) as exited:  # (was: "options go after the command")
            run(["--version"])
        assert exited.value.code == 0
        assert capsys.readouterr().out.startswith(f"{name} 0.")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["event", "--title", "t", "--at", "0001-01-01T00:00:00+14:00", "x"], "--at"),
        (["remember", "--title", "t", "--image", "/nonexistent/p.png", "x"], "--image"),
        (["remember", "--title", "t", "--image", __file__, "x"], "not a PNG, JPEG"),
    ],
)
def test_arguments_that_cannot_be_used_are_bad_usage_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    """They exited 1 with a Python exception's name, after connecting."""
    assert main([*argv, "--workspace", str(tmp_path), "--lang", "en"]) == 2
    assert said in capsys.readouterr().err


def test_an_image_over_the_size_limit_is_bad_usage_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It exited 1 with "failed: ValueError: image ... is 69 bytes, more than 10", after
    connecting (a missing or non-image file was already bad usage)."""
    image = tmp_path / "p.gif"
    image.write_bytes(b"GIF89a" + bytes(40))
    monkeypatch.setenv("AGENT_CLIENT_MAX_IMAGE_BYTES", "10")
    argv = ["remember", "--title", "t", "--image", str(image), "x"]
    assert main([*argv, "--workspace", str(tmp_path / "nowhere"), "--lang", "en"]) == 2
    said = capsys.readouterr().err
    assert "46 bytes, more than the 10 an image may have" in said and "ValueError" not in said


def test_text_from_stdin_without_a_stdin_is_bad_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", None)  # as under cron, or a daemon with stdin closed
    argv = ["remember", "--title", "t", "-", "--workspace", str(tmp_path), "--lang", "en"]
    assert main(argv) == 2
    assert "no stdin" in capsys.readouterr().err


def test_an_empty_setting_means_its_default(tmp_path: Path) -> None:
    """As deploy/env.example says; an empty value was refused (exit 2)."""
    from agent_client.settings import ClientSettings

    empty = {"AGENT_CLIENT_CONNECT_TIMEOUT": "", "AGENT_CLIENT_LLM": "", "AGENT_CLIENT_TZ": ""}
    settings = ClientSettings.resolve({}, {"AGENT_CLIENT_WORKSPACE": str(tmp_path), **empty})
    assert settings == ClientSettings.resolve({}, {"AGENT_CLIENT_WORKSPACE": str(tmp_path)})


def test_the_indexer_history_checks_its_numbers_as_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["history", "--workspace", str(tmp_path), "--lang", "en", "a.md"]
    for extra in (["--show", "99999999999999999999"], ["--show", "0"], ["--limit", "1001"]):
        with pytest.raises(SystemExit) as exited:
            indexer_main([*argv, *extra])
        assert exited.value.code == 2 and "whole number" in capsys.readouterr().err


# -- against a real indexer: refused entries write nothing, the session lives on ---------


def test_a_surrogate_entry_is_refused_before_queueing_and_the_session_survives(
    server: RunningIndexer, writer: tuple[MemoryWriter, CollectingNoticeSink], lang: str
) -> None:
    w, sink = writer
    bad = MemoryEntry(
        **json.loads(
            f'{{"lang": "{lang}", "kind": "knowledge", "title": "s", "content": "x \\ud800 y"}}'
        )
    )
    with pytest.raises(ValueError, match="not valid UTF-8"):
        w.submit([entry(lang, "before"), bad, entry(lang, "after")])
    assert w.flush(30) and sink.notices == [] and notes(server, lang) == []
    w.submit([entry(lang, "Good one", "fine"), MemoryEntry(lang, "event", "Ev", "e", timestamp=T0)])
    assert w.flush(60)
    assert [n.ok for n in sink.notices] == [True, True], [n.error for n in sink.notices]
    assert "items/good-one.md" in notes(server, lang)


def test_a_carriage_return_title_writes_nothing(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    common = ("--workspace", str(server.workspace), "--lang", lang)
    code, _, err = cli(capsys, "remember", *common, "--title", "a\rb # c", "text")
    assert code == 2 and "one line" in err
    code, _, err = cli(capsys, "event", *common, "--title", "a\u2028b", "text")
    assert code == 2 and "one line" in err
    assert notes(server, lang) == []


def test_cli_arguments_that_are_not_utf8_are_bad_usage(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str], lang: str
) -> None:
    common = ("--workspace", str(server.workspace), "--lang", lang)
    cases = [
        ("remember", "--title", f"t{ESCAPED}", "text"),
        ("remember", "--title", "t", "--tag", f"g{ESCAPED}", "text"),
        ("event", "--title", "t", f"body {ESCAPED}"),
        ("read", f"items/a{ESCAPED}.md"),
        ("search", f"q{ESCAPED}"),
        ("recall", f"q{ESCAPED}"),
        ("delete", f"items/a{ESCAPED}.md"),
        ("edit", "items/a.md", "--body", f"b{ESCAPED}"),
        ("history", f"items/a{ESCAPED}.md"),
    ]
    for argv in cases:
        code, _, err = cli(capsys, *argv, *common)
        assert code == 2, (argv, err)
        assert "not valid UTF-8" in err and "\\xff" in err and err.count("\n") == 1, err
    assert notes(server, lang) == []


def test_stdin_that_is_not_utf8_is_bad_usage(server: RunningIndexer, lang: str) -> None:
    argv = ["remember", "--workspace", str(server.workspace), "--lang", lang, "--title", "t", "-"]
    proc = subprocess.run(
        [sys.executable, "-m", "agent_client", *argv],
        input=b"ab\xffcd\n",
        capture_output=True,
        timeout=60,
        env={**os.environ, "PYTHONIOENCODING": "utf-8:surrogateescape"},
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        proc.stderr.decode()
        == "agent-client: stdin is not valid UTF-8 text (byte 0xff at offset 2)\n"
    )
    assert notes(server, lang) == []


def test_a_text_stream_as_stdin_still_works(
    server: RunningIndexer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(f"from stdin {LONE}"))
    common = ("--workspace", str(server.workspace), "--lang", lang)
    code, _, err = cli(capsys, "remember", *common, "--title", "t", "-")
    assert code == 2 and "not valid UTF-8" in err
    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin"))
    assert cli(capsys, "remember", *common, "--title", "t", "-")[0] == 0


async def test_the_action_tool_refuses_a_surrogate_edit_and_keeps_the_note(
    server: RunningIndexer, writer: tuple[MemoryWriter, CollectingNoticeSink], lang: str
) -> None:
    w, sink = writer
    w.submit([entry(lang, "Kept", "original text")])
    assert w.flush(60) and sink.notices[0].ok
    path = server.workspace / "memory" / "languages" / lang / "vault" / "items" / "kept.md"
    before = path.read_bytes()
    arguments = json.dumps({"action": "edit", "path": "items/kept.md", "body": "x"})
    arguments = arguments.replace('"x"', '"x \\udc80"')  # valid JSON, a lone surrogate inside
    result = await run_memory_writer_action(arguments, writer=w, lang=lang)
    assert isinstance(result, str) and result.startswith("invalid_argument: ") and "UTF-8" in result
    result = await run_memory_writer_action(
        {"action": "edit", "path": "items/kept.md", "frontmatter": {"level": 2}},
        writer=w,
        lang=lang,
    )
    assert result == {"ok": True, "action": "edited", "lang": lang, "path": "items/kept.md"}
    assert path.read_bytes() != before and b"original text" in path.read_bytes()


def test_a_moment_no_zone_can_show_is_refused_before_anything_is_written(
    server: RunningIndexer,
    writer: tuple[MemoryWriter, CollectingNoticeSink],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    lang: str,
) -> None:
    """Year 9999's last hours in UTC are year 10000 at +14:00: they were taken, and the
    writer failed on the day file's name with "OverflowError: date value out of range"
    (exit 1); a moment a day inside what can be stored goes in as before."""
    w, sink = writer
    monkeypatch.setenv("AGENT_CLIENT_TZ", "Pacific/Kiritimati")  # +14:00
    common = ["--workspace", str(server.workspace), "--lang", lang]
    for kind in ("event", "remember"):
        argv = [kind, "--title", "t", "--at", "9999-12-31T23:00:00+00:00", "x", *common]
        assert main(argv) == 2
        assert "outside the times that can be stored" in capsys.readouterr().err
    late = {"lang": lang, "kind": "event", "title": "t", "content": "x"}
    early = MemoryEntry(lang, "event", "t", "x", timestamp=datetime(1, 1, 1, 1, tzinfo=UTC))
    receipt = remember_turn([{**late, "timestamp": "9999-12-31T23:00:00Z"}, early], writer=w)
    assert receipt.queued == [] and len(receipt.refused) == 2
    assert all("outside the times that can be stored" in why for why in receipt.refused)
    with pytest.raises(ValueError, match="outside the times"):
        w.submit([early])
    assert w.flush(30) and sink.notices == [] and notes(server, lang) == []
    argv = ["event", "--title", "t", "--at", "9999-12-30T09:00:00+00:00", "x", *common]
    assert main(argv) == 0 and notes(server, lang)[-1] == "events/9999/12/30.md"
