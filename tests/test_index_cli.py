"""``indexer reindex | status | search`` through the real CLI (subprocesses)."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.indexer_process import start_indexer, wait_for

from indexer.cli import main
from indexer.cli.remote import search_on_server
from indexer.health import server_health
from shared.workspace import Workspace


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "indexer", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "INDEXER_WORKSPACE": ""},
    )


def make_workspace(tmp_path: Path) -> Workspace:
    ws = Workspace(tmp_path / "ws")
    for n in range(12):
        path = ws.vault_dir("en") / f"items/n{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: Note {n}\ntype: item\ntags: [t{n % 2}]\n---\nshared body {n}\n"
        )
    ja = ws.vault_dir("ja") / "東京.md"
    ja.parent.mkdir(parents=True)
    ja.write_text("東京都に住んでいます")
    (ws.vault_dir("en") / "bad.md").write_text("---\ntitle: [oops\n---\nshared broken\n")
    return ws


def test_reindex_prints_plain_progress_and_problems(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    summary = "---\ntype: summary\nabstract: 1 notes\nchildren_digest: x\n---\n# Overview\n"
    (ws.vault_dir("en") / ".overview.md").write_text(summary)
    done = cli("reindex", "--workspace", str(ws.root))
    assert done.returncode == 0, done.stderr
    said = "indexer reindex: 15/15 files (notes and folder summaries)"  # (14 + 1)
    assert said in done.stderr.splitlines()
    assert "indexed 14 notes and 1 folder summary" in done.stdout  # as status counts
    assert "en/bad.md: invalid frontmatter" in done.stdout
    assert ws.index_path.exists()


def test_status_reports_counts_and_no_server(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    before = cli("status", "--workspace", str(ws.root))
    assert before.returncode == 0 and "index: none yet" in before.stdout
    assert cli("reindex", "--workspace", str(ws.root)).returncode == 0
    ws.url_file.write_text("http://127.0.0.1:9/mcp\n")  # stale: nothing answers there
    done = cli("status", "--workspace", str(ws.root))
    assert done.returncode == 0, done.stderr
    assert "server: not running" in done.stdout
    assert "en: 13 notes" in done.stdout and "ja: 1 note\n" in done.stdout
    assert "last reconcile: 20" in done.stdout
    report = json.loads(cli("status", "--workspace", str(ws.root), "--json").stdout)
    assert report["server"]["running"] is False
    assert report["index"]["langs"] == {"en": 13, "ja": 1}
    assert report["index"]["size_bytes"] > 0


def test_status_names_the_files_no_tool_can_reach(tmp_path: Path) -> None:
    """A note another program named ``ratio 3:2.md`` is left out of every listing and
    search with one log line: ``status`` counts such names, dot-names aside."""
    ws = make_workspace(tmp_path)
    en = ws.vault_dir("en")
    (en / "ratio 3:2.md").write_text("invisible")
    (en / "items" / "CON.txt").write_text("invisible")
    deep = en / "/".join(f"d{i}" for i in range(33))
    deep.mkdir(parents=True)
    (deep / "leaf.md").write_text("too deep")
    (en / ".obsidian").mkdir()
    (en / ".obsidian" / "a:b.json").write_text("{}")  # hidden by design: not counted
    (en / ".DS_Store").write_text("")
    done = cli("status", "--workspace", str(ws.root))
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("unreachable in en:"))
    assert line.startswith("unreachable in en: 3 files or folders no tool can list"), line
    assert "'ratio 3:2.md'" in line and "'items/CON.txt'" in line and "d31/'" in line
    assert "unreachable in ja" not in done.stdout
    report = json.loads(cli("status", "--workspace", str(ws.root), "--json").stdout)
    assert report["unreachable"]["en"]["count"] == 3
    assert report["unreachable"]["en"]["partial"] is False
    for name in ("ratio 3:2.md", "items/CON.txt"):
        (en / name).unlink()
    (deep / "leaf.md").unlink()
    for i in range(33, 0, -1):
        (en / "/".join(f"d{j}" for j in range(i))).rmdir()
    assert "unreachable" not in cli("status", "--workspace", str(ws.root)).stdout


def test_status_reports_what_a_running_server_says_of_its_index(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    server = start_indexer(ws.root, env={"INDEXER_SUMMARIES": "0"})
    try:
        wait_for(lambda: (server_health(server.url, ws) or {}).get("index_ready"), 30, what="ready")
        report = json.loads(cli("status", "--workspace", str(ws.root), "--json").stdout)
        assert report["server"] == {
            "running": True,
            "url": server.url,
            "index_ready": True,
            "index_partial": False,
            "unreadable_vaults": {},
        }
        text = cli("status", "--workspace", str(ws.root)).stdout
        assert f"server: running at {server.url}" in text and "catching up" not in text
        # A URL file a crash left elsewhere, whose port this server took since: not ours.
        other = make_workspace(tmp_path / "other")
        other.url_file.write_text(server.url + "\n")
        text = cli("status", "--workspace", str(other.root)).stdout
        assert "server: not running" in text and "no indexer of this workspace" in text
        options = {"limit": 10, "type": None, "tags": None, "path": "", "offset": 0}
        assert search_on_server(other, "en", "n1", **options) is None  # not its results
        # A stopped (or hung) server holds the workspace: it was "not running", while
        # `serve` is refused for it.
        os.kill(server.process.pid, signal.SIGSTOP)
        try:
            text = cli("status", "--workspace", str(ws.root)).stdout
        finally:
            os.kill(server.process.pid, signal.SIGCONT)
        assert "not running" not in text, text
        pid = server.process.pid
        assert f"server: not answering: an indexer serve (pid {pid}) holds this" in text
    finally:
        server.stop()
    stopped = json.loads(cli("status", "--workspace", str(ws.root), "--json").stdout)
    assert stopped["server"]["running"] is False and stopped["server"]["index_partial"] is None


async def test_search_asks_the_running_server_and_falls_back_to_the_file(
    tmp_path: Path,
) -> None:
    """Beside a server the CLI asks it (an append it has not flushed to the index file is
    found); a refusal is the query's own; a server that will not answer (a wrong token
    here) leaves the index file to answer."""
    ws = make_workspace(tmp_path)
    token = "tok-" + "q" * 32
    server = start_indexer(ws.root, "--token", token, env={"INDEXER_SUMMARIES": "0"})
    try:
        async with server.client() as client:
            args = {"lang": "en", "path": "items/n1.md", "content": "a quokka smiled\n"}
            await client.call_tool("append", args)
            over_mcp = await client.call_tool("search", {"lang": "en", "query": "quokka"})
        options = {"limit": 10, "type": None, "tags": None, "path": "", "offset": 0}
        answer = search_on_server(ws, "en", "quokka", **options)
        assert answer == over_mcp.structured_content
        assert [hit["path"] for hit in answer["results"]] == ["items/n1.md"]
        done = cli("search", "--workspace", str(ws.root), "--lang", "en", "quokka", "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["results"] == answer["results"]
        bad = cli("search", "--workspace", str(ws.root), "--lang", "en", '"')
        assert bad.returncode == 2 and bad.stderr.startswith("indexer search: invalid_argument:")
        ws.token_file.write_text("not-the-token\n")
        assert search_on_server(ws, "en", "quokka", **options) is None
        fallback = cli("search", "--workspace", str(ws.root), "--lang", "en", "shared", "--json")
        assert fallback.returncode == 0, fallback.stderr
        assert len(json.loads(fallback.stdout)["results"]) == 10
    finally:
        server.stop()


def test_search_with_filters_and_json(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    done = cli("search", "--workspace", str(ws.root), "--lang", "en", "shared", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert len(result["results"]) == 10 and result["partial"] is False
    args = ["--workspace", str(ws.root), "--lang", "en", "--tag", "t1", "--type", "item"]
    done = cli("search", *args, "--limit", "50", "--path", "items", "--json", "shared")
    assert sorted(h["path"] for h in json.loads(done.stdout)["results"]) == [
        f"items/n{n}.md" for n in sorted((1, 3, 5, 7, 9, 11), key=str)
    ]
    text = cli("search", "--workspace", str(ws.root), "--lang", "ja", "東京")
    assert text.returncode == 0 and "東京.md" in text.stdout and "**東京**" in text.stdout


def test_search_takes_a_word_after_a_minus_as_the_querys(tmp_path: Path) -> None:
    """``indexer search python -java`` was refused: argparse took ``-java`` for an
    option it did not know."""
    ws = make_workspace(tmp_path)
    (ws.vault_dir("en") / "items/n3.md").write_text("---\ntitle: Note 3\n---\nshared java\n")
    base = ("search", "--workspace", str(ws.root), "--lang", "en")
    for query in (["shared", "-java"], ["--", "shared", "-java"], ["shared", "NOT", "java"]):
        done = cli(*base, "--limit", "50", "--json", *query)
        assert done.returncode == 0, done.stderr
        found = {hit["path"] for hit in json.loads(done.stdout)["results"]}
        assert "items/n3.md" not in found and "items/n4.md" in found
    assert cli(*base, "-h").stdout.startswith("usage:")


def test_search_refuses_bad_queries_with_one_line(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    done = cli("search", "--workspace", str(ws.root), "--lang", "en", '"')
    assert done.returncode == 2
    assert done.stderr.startswith("indexer search: invalid_argument:")
    assert "Traceback" not in done.stderr
    bad_lang = cli("search", "--workspace", str(ws.root), "--lang", "EN!", "x")
    assert bad_lang.returncode == 2 and "invalid_lang" in bad_lang.stderr
    # A vault not made yet has no notes, as the server's search answers (a vault is made
    # by its first write): no hit, exit 0, and the vaults that have notes named (a typo)
    no_vault = cli("search", "--workspace", str(ws.root), "--lang", "zz", "x")
    assert (no_vault.returncode, no_vault.stderr) == (0, "")
    assert no_vault.stdout == (
        "no notes match. The vault 'zz' has no notes (vaults with notes: en, ja).\n"
    )
    as_json = cli("search", "--workspace", str(ws.root), "--lang", "zz", "--json", "x")
    assert as_json.returncode == 0 and json.loads(as_json.stdout)["results"] == []
    for outside in ("../..", "/etc"):  # "no notes match" without a server, refused with one
        bad_path = cli(
            "search", "--workspace", str(ws.root), "--lang", "en", "--path", outside, "x"
        )
        assert bad_path.returncode == 2 and "forbidden_path" in bad_path.stderr, bad_path.stderr


def test_a_path_the_vault_refuses_is_bad_usage(tmp_path: Path) -> None:
    """``forbidden_path`` of a path typed on the command line exited 1 ("failed") where
    ``--help`` says 2 is bad usage, as ``invalid_argument`` and ``invalid_lang`` are;
    a version that is not there still failed (1). Nothing is changed on disk."""
    ws = make_workspace(tmp_path)
    vault = ws.vault_dir("en")
    (vault / "link").symlink_to(tmp_path)
    before = sorted(str(p) for p in vault.rglob("*"))
    for path in ("../x.md", "/etc/passwd", "a:b.md", "link/n.md", "CON.md", "items/"):
        done = cli("history", "--workspace", str(ws.root), "--lang", "en", path)
        assert done.returncode == 2, (path, done.stderr)
        assert done.stderr.startswith("indexer history: forbidden_path: "), done.stderr
        assert "Traceback" not in done.stderr
    missing = cli("history", "--workspace", str(ws.root), "--lang", "en", "--show", "9", "x.md")
    assert missing.returncode == 1 and "not_found" in missing.stderr  # (failed, as before)
    assert sorted(str(p) for p in vault.rglob("*")) == before


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["x\udcffy"], "the query"),  # (a byte that is not UTF-8 in argv: b"x\xffy")
        (["--type", "\udcff", "shared"], "type"),
        (["--tag", "t1", "--tag", "t\udcff", "shared"], "a tag"),
    ],
)
def test_search_beside_a_server_refuses_what_is_not_utf8_before_asking(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
    args: list[str],
    named: str,
) -> None:
    """Beside a server, the query, a type or a tag went into the search's URL unchecked:
    "indexer search: 'utf-8' codec can't encode character '\\udcff'...". Refused now as
    the index refuses them, before the server is asked."""
    import indexer.cli.index as index_cli
    from indexer.cli import remote

    ws = make_workspace(tmp_path)
    asked: list[Workspace] = []

    def answering(workspace: Workspace) -> tuple[str, dict[str, str]]:
        asked.append(workspace)
        return "http://127.0.0.1:9", {}  # (nothing listens there: never reached)

    monkeypatch.setattr(index_cli, "server_holds_lock", lambda workspace: True)
    monkeypatch.setattr(remote, "_answering_server", answering)
    code = main(["search", "--workspace", str(ws.root), "--lang", "en", *args])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith(f"indexer search: invalid_argument: {named} is not"), err
    assert "lone surrogate" in err and asked == []


def test_reindex_refused_while_a_server_holds_the_lock(tmp_path: Path) -> None:
    from indexer.workspace_lock import workspace_lock

    ws = make_workspace(tmp_path)
    with workspace_lock(ws, serving=True):  # as `indexer serve` holds it
        done = cli("reindex", "--workspace", str(ws.root))
    assert done.returncode == 3  # as `indexer --help` says: another indexer serves it
    assert "a server is running" in done.stderr
    assert cli("reindex", "--workspace", str(ws.root)).returncode == 0
    with workspace_lock(ws, serving=True):  # search reads beside the "server"
        found = cli("search", "--workspace", str(ws.root), "--lang", "en", "broken", "--json")
    assert found.returncode == 0, found.stderr
    assert [h["path"] for h in json.loads(found.stdout)["results"]] == ["bad.md"]


def test_a_command_holding_the_lock_is_told_apart_from_a_server(tmp_path: Path) -> None:
    """Beside a command that holds the workspace lock (``reindex``), and a URL and token
    file a crashed server left: ``search`` sent the token to whatever took the old port
    (it took the lock for a server's), ``summarize`` wrote summaries as if a server would
    record them, and a second ``reindex`` or ``serve`` said a server was running."""
    import socket
    import threading

    from indexer.workspace_lock import workspace_lock

    ws = make_workspace(tmp_path)
    assert cli("reindex", "--workspace", str(ws.root)).returncode == 0
    stranger = socket.socket()
    stranger.bind(("127.0.0.1", 0))
    stranger.listen(4)
    stranger.settimeout(0.2)
    heard: list[bytes] = []

    def listen() -> None:
        while not stop.is_set():
            try:
                conn, _ = stranger.accept()
            except TimeoutError:
                continue
            with conn:
                heard.append(conn.recv(65536))
                conn.sendall(b"HTTP/1.1 500 x\r\nContent-Length: 0\r\n\r\n")

    stop = threading.Event()
    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    port = stranger.getsockname()[1]
    try:
        with workspace_lock(ws, serving=True):  # the crashed server's serving lock file stays
            (ws.root / "indexer.mcp.url").write_text(f"http://127.0.0.1:{port}/mcp\n")
            (ws.root / "indexer.mcp.token").write_text("s3cret-token-0123456789\n")
        with workspace_lock(ws):  # `indexer reindex`, say
            found = cli("search", "--workspace", str(ws.root), "--lang", "en", "broken")
            again = cli("reindex", "--workspace", str(ws.root))
            summarized = cli("summarize", "--workspace", str(ws.root))
            status = cli("status", "--workspace", str(ws.root))
            opened = cli("open", "--workspace", str(ws.root), "--print")
    finally:
        stop.set()
        listener.join()
        stranger.close()
    assert found.returncode == 0 and "bad.md" in found.stdout, found.stderr
    assert status.returncode == 0 and opened.returncode != 0, (status, opened)
    assert heard == []  # (not even /health: a stranger could answer it as a server would)
    for refused in (again, summarized):
        assert refused.returncode == 3, refused.stderr
        assert "an indexer command (pid" in refused.stderr and "serving" not in refused.stderr
    assert not list(ws.root.rglob(".overview.md"))


def test_a_server_started_before_an_upgrade_is_named_as_one(tmp_path: Path) -> None:
    """An ``indexer serve`` of a version without the serving lock holds the workspace
    lock: ``reindex`` said "an indexer command (pid N) is working ... try again when it
    has finished", which a server never does, and ``status`` "server: not running". Both
    name that server now, to stop."""
    ws = make_workspace(tmp_path)
    holding = (
        "import sys, time\n"
        "from indexer.workspace_lock import workspace_lock\n"
        "from pathlib import Path\n"
        "from shared.workspace import Workspace\n"
        "with workspace_lock(Workspace(Path(sys.argv[1]))):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", holding, str(ws.root), "indexer", "serve"],
        stdout=subprocess.PIPE,
        text=True,
    ) as old_server:
        try:
            assert old_server.stdout is not None and old_server.stdout.readline() == "held\n"
            refused = cli("reindex", "--workspace", str(ws.root))
            status = cli("status", "--workspace", str(ws.root))
        finally:
            old_server.kill()
    assert refused.returncode == 3, refused.stderr
    assert f"an indexer serve (pid {old_server.pid})" in refused.stderr
    assert "without a serving lock: one started before an upgrade" in refused.stderr
    assert status.returncode == 0, status.stderr  # (it said "server: not running")
    assert f"server: an indexer serve (pid {old_server.pid}) runs without" in status.stdout
    assert "server: not running" in cli("status", "--workspace", str(ws.root)).stdout


def test_workspace_is_required(tmp_path: Path) -> None:
    done = cli("status")
    assert done.returncode == 2 and "--workspace" in done.stderr


def test_a_reader_that_goes_away_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """``indexer history ... | head -1`` printed ``[Errno 32] Broken pipe``."""
    ws = make_workspace(tmp_path)
    assert cli("reindex", "--workspace", str(ws.root)).returncode == 0
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before we write
    closed = os.fdopen(write_end, "w")
    monkeypatch.setattr(sys, "stdout", closed)
    code = main(["search", "--workspace", str(ws.root), "--lang", "en", "broken", "--json"])
    monkeypatch.undo()
    closed.close()  # stdout now goes nowhere: closing it flushes into nothing
    assert code == 1 and capsys.readouterr().err == ""


def test_commands_that_write_without_a_server_hold_the_workspace_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reindex, and search, summarize and maintain without a server, looked for a server
    once and then wrote the index and history unlocked: a server starting meanwhile was a
    second writer of both. They hold the lock while they write (a server then waits its
    turn: it is refused, as beside another server)."""
    import threading

    from indexer.cli.index import lock_unless_served
    from indexer.workspace_lock import workspace_lock
    from shared.errors import AlreadyRunningError

    ws = Workspace(tmp_path)
    held = lock_unless_served(ws)
    assert held is not None
    with pytest.raises(AlreadyRunningError), workspace_lock(ws):  # a server starting now
        pass
    held.close()
    with workspace_lock(ws, serving=True):  # a server: the commands take the read-only way
        assert lock_unless_served(ws) is None
    (tmp_path / "memory/languages/en/vault").mkdir(parents=True)
    (tmp_path / "memory/languages/en/vault/a.md").write_text("# a\n\nzebra\n")
    during: list[bool] = []
    real = lock_unless_served

    def watched(workspace: Workspace):  # type: ignore[no-untyped-def]
        stack = real(workspace)
        probe = threading.Thread(target=lambda: during.append(_refused(workspace)))
        probe.start()
        probe.join()
        return stack

    import indexer.cli.index as index_cli

    monkeypatch.setattr(index_cli, "lock_unless_served", watched)  # (a probe while held)
    assert main(["search", "--workspace", str(tmp_path), "--lang", "en", "zebra"]) == 0
    assert main(["reindex", "--workspace", str(tmp_path)]) == 0
    assert during == [True, True]


def _refused(workspace: Workspace) -> bool:
    from indexer.workspace_lock import workspace_lock
    from shared.errors import AlreadyRunningError

    try:
        with workspace_lock(workspace):
            return False
    except AlreadyRunningError:
        return True


def test_a_server_starting_while_a_client_looks_at_the_lock_takes_it(tmp_path: Path) -> None:
    """A client looking whether a server runs holds the lock shared for a moment; a
    server starting just then was refused as if another one served."""
    import threading
    import time

    from indexer.workspace_lock import workspace_lock

    ws = Workspace(tmp_path)
    ws.state_dir.mkdir(parents=True)
    ws.serving_lock_path.write_text("")
    fd = os.open(ws.serving_lock_path, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH)  # a probe, let go 0.1 s later
    threading.Timer(0.1, os.close, (fd,)).start()
    began = time.monotonic()
    with workspace_lock(ws, serving=True):
        assert 0.05 < time.monotonic() - began < 1.0


def test_status_of_a_newer_index_says_to_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "run `indexer reindex`", which refuses a newer index."""
    from indexer.index.schema import SCHEMA_VERSION
    from indexer.sqlite_lib import sqlite3

    ws = tmp_path / "ws"
    (ws / "memory/languages/en/vault").mkdir(parents=True)
    (ws / "memory/languages/en/vault/a.md").write_text("alpha\n")
    assert main(["reindex", "--workspace", str(ws)]) == 0
    with sqlite3.connect(ws / ".indexer/index.sqlite") as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    capsys.readouterr()
    main(["status", "--workspace", str(ws)])
    said = "".join(capsys.readouterr())
    assert "upgrade the indexer, or delete the file" in said, said
    assert "reindex" not in said
