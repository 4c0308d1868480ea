"""Agent-client settings (flag > env > default) and discovery of the indexer's URL."""

from __future__ import annotations

import ast
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from agent_client.discovery import discover
from agent_client.merge.llm import make_llm
from agent_client.settings import SETTINGS_HELP, ClientSettings
from shared.errors import IndexerOfflineError


def test_flag_beats_env_beats_default(tmp_path: Path) -> None:
    env = {"AGENT_CLIENT_WORKSPACE": str(tmp_path / "env"), "AGENT_CLIENT_CONNECT_TIMEOUT": "0.5"}
    settings = ClientSettings.resolve({"workspace": str(tmp_path / "flag")}, env)
    assert settings.workspace == tmp_path / "flag"
    assert settings.connect_timeout == 0.5
    assert settings.call_timeout == 30.0
    assert ClientSettings.resolve({}, env).workspace == tmp_path / "env"


def test_no_workspace_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="--workspace"):
        ClientSettings.resolve({}, {})


def test_llm_is_configured_only_with_a_model(tmp_path: Path) -> None:
    base = {"AGENT_CLIENT_WORKSPACE": str(tmp_path)}
    assert ClientSettings.resolve({}, base).llm is None
    env = {**base, "VAULT_LLM_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
    llm = ClientSettings.resolve({}, env).llm
    assert llm is not None and llm.model == "m" and llm.base_url == "http://127.0.0.1:1/v1"
    assert llm.api_key == "unused"  # a local server may need no key
    assert ClientSettings.resolve({"llm": "off"}, env).llm is None
    with pytest.raises(ValueError, match="AGENT_CLIENT_LLM"):
        ClientSettings.resolve({"llm": "maybe"}, env)


def test_an_empty_openai_base_url_is_the_sdks_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line ``OPENAI_BASE_URL=`` of deploy/env.example, loaded into the environment,
    was the URL the SDK called: every merge failed ("missing an 'http://' or 'https://'
    protocol") and fell back."""
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    env = {"AGENT_CLIENT_WORKSPACE": str(tmp_path), "VAULT_LLM_MODEL": "m", "OPENAI_BASE_URL": ""}
    llm = ClientSettings.resolve({}, env).llm
    assert llm is not None
    assert str(make_llm(llm).base_url) == "https://api.openai.com/v1/"
    blank = ClientSettings.resolve({}, {**env, "OPENAI_BASE_URL": " "}).llm
    assert blank is not None and str(make_llm(blank).base_url) == "https://api.openai.com/v1/"


def test_the_fallback_switch_takes_on_or_off_and_refuses_the_rest(tmp_path: Path) -> None:
    """ "no", "off" and "banana" all meant on: only "0" and "false" turned it off."""
    base = {"AGENT_CLIENT_WORKSPACE": str(tmp_path)}
    assert ClientSettings.resolve({}, base).llm_fallback is True
    for value, on in [("1", True), ("TRUE", True), ("yes", True), ("0", False), ("no", False)]:
        env = {**base, "AGENT_CLIENT_LLM_FALLBACK": value}
        assert ClientSettings.resolve({}, env).llm_fallback is on, value
    for value in ("off ", "Off"):
        assert not ClientSettings.resolve(
            {}, {**base, "AGENT_CLIENT_LLM_FALLBACK": value}
        ).llm_fallback
    with pytest.raises(ValueError, match="AGENT_CLIENT_LLM_FALLBACK"):
        ClientSettings.resolve({}, {**base, "AGENT_CLIENT_LLM_FALLBACK": "banana"})


def test_time_zone(tmp_path: Path) -> None:
    env = {"AGENT_CLIENT_WORKSPACE": str(tmp_path), "AGENT_CLIENT_TZ": "Asia/Tokyo"}
    assert ClientSettings.resolve({}, env).tz == ZoneInfo("Asia/Tokyo")
    assert ClientSettings.resolve({}, {"AGENT_CLIENT_WORKSPACE": str(tmp_path)}).tz is None


def test_lang_for_the_cli(tmp_path: Path) -> None:
    env = {"AGENT_CLIENT_WORKSPACE": str(tmp_path), "AGENT_CLIENT_LANG": "ja"}
    assert ClientSettings.resolve({}, env).lang == "ja"
    assert ClientSettings.resolve({"lang": "zh-Hans"}, env).lang == "zh-Hans"
    assert ClientSettings.resolve({}, {"AGENT_CLIENT_WORKSPACE": str(tmp_path)}).lang is None
    with pytest.raises(ValueError, match="not a vault id"):
        ClientSettings.resolve({}, {**env, "AGENT_CLIENT_LANG": "Japanese"})


def test_every_env_var_read_is_documented() -> None:
    source = Path("agent_client/settings.py").read_text()
    used = {
        node.args[1].value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "pick"
        and isinstance(node.args[1], ast.Constant)
    }
    assert used == set(SETTINGS_HELP)


def test_discover_reads_url_and_token_every_time(tmp_path: Path) -> None:
    url_file, token_file = tmp_path / "indexer.mcp.url", tmp_path / "indexer.mcp.token"
    with pytest.raises(IndexerOfflineError, match="no indexer URL file"):
        discover(url_file, token_file)
    url_file.write_text("http://127.0.0.1:1234/mcp\n")
    first = discover(url_file, token_file)
    assert (first.url, first.token) == ("http://127.0.0.1:1234/mcp", None)
    assert discover(url_file, token_file) == first  # the same start of the server
    token_file.write_text("s3cret\n")
    url_file.write_text("http://127.0.0.1:4321/mcp\n")
    second = discover(url_file, token_file)
    assert (second.url, second.token) == ("http://127.0.0.1:4321/mcp", "s3cret")
    replaced = url_file.with_name("new")  # a restart on the same port: the file is new
    replaced.write_text("http://127.0.0.1:4321/mcp\n")
    replaced.replace(url_file)
    again = discover(url_file, token_file)
    assert again.url == second.url and again != second
    url_file.write_text("garbage")
    with pytest.raises(IndexerOfflineError, match="no http"):
        discover(url_file, token_file)


def test_discover_refuses_what_is_not_one_small_file_of_one_line(tmp_path: Path) -> None:
    """A FIFO held the reader (and every queued entry behind it) until a program wrote to
    it; /dev/zero never ended; a second line in the URL went up as a traceback."""
    import os
    import time

    url_file, token_file = tmp_path / "indexer.mcp.url", tmp_path / "indexer.mcp.token"
    for url in ("http://127.0.0.1:9/mcp\nleft over\n", "http://x y/mcp", "http://é/mcp"):
        url_file.write_text(url)
        with pytest.raises(IndexerOfflineError, match="does not hold one URL"):
            discover(url_file, token_file)
    url_file.write_bytes(b"http://127.0.0.1:9/mcp" + b"x" * 70_000)
    with pytest.raises(IndexerOfflineError, match="larger than 64 KiB"):
        discover(url_file, token_file)
    began = time.monotonic()
    url_file.unlink()
    os.mkfifo(url_file)
    with pytest.raises(IndexerOfflineError, match="not a regular file"):
        discover(url_file, token_file)
    url_file.unlink()
    url_file.symlink_to("/dev/zero")
    with pytest.raises(IndexerOfflineError, match="not a regular file"):
        discover(url_file, token_file)
    url_file.unlink()
    url_file.write_text("http://127.0.0.1:9/mcp\n")
    os.mkfifo(token_file)
    with pytest.raises(IndexerOfflineError, match="not a regular file"):
        discover(url_file, token_file)
    assert time.monotonic() - began < 5


def test_a_server_from_before_an_upgrade_is_named_not_called_stopped(tmp_path: Path) -> None:
    """An ``indexer serve`` of a version without the serving lock, still running after an
    upgrade, answers; the client said "no indexer is running ... left from one that
    stopped" (and its Memory Writer dropped every entry as offline). It says what runs."""
    import subprocess
    import sys

    url_file, token_file = tmp_path / "indexer.mcp.url", tmp_path / "indexer.mcp.token"
    url_file.write_text("http://127.0.0.1:9/mcp\n")
    holding = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from indexer.workspace_lock import workspace_lock\n"
        "from shared.workspace import Workspace\n"
        "workspace = Workspace(Path(sys.argv[1]))\n"
        "with workspace_lock(workspace):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", holding, str(tmp_path), "indexer", "serve"],
        stdout=subprocess.PIPE,
        text=True,
    ) as old_server:
        try:
            assert old_server.stdout is not None and old_server.stdout.readline() == "held\n"
            with pytest.raises(IndexerOfflineError, match="started before an upgrade") as said:
                discover(url_file, token_file)
        finally:
            old_server.kill()
    assert f"(pid {old_server.pid})" in said.value.message
    with pytest.raises(IndexerOfflineError, match="left from one that stopped"):
        discover(url_file, token_file)  # gone: its pid is no server's now


def test_a_url_file_left_by_a_stopped_indexer_is_not_followed(tmp_path: Path) -> None:
    """After a crash the URL file names a port anything may take next; the client sent
    it the token before it could tell it apart. No process holding the serving lock: no
    indexer, whatever answers there; nor when a command (``indexer reindex``) holds the
    workspace lock alone, as it does after a crash."""
    import fcntl
    import os

    url_file, token_file = tmp_path / "indexer.mcp.url", tmp_path / "indexer.mcp.token"
    url_file.write_text("http://127.0.0.1:9/mcp\n")
    (tmp_path / ".indexer").mkdir()
    serving, workspace_lock = tmp_path / ".indexer" / "serving", tmp_path / ".indexer" / "lock"
    serving.write_text("")
    workspace_lock.write_text("")
    with pytest.raises(IndexerOfflineError, match="left from one that stopped") as stale:
        discover(url_file, token_file)
    assert "http://127.0.0.1:9/mcp was not tried" in str(stale.value)  # (named it not)
    held = [os.open(workspace_lock, os.O_RDWR)]
    try:
        fcntl.flock(held[0], fcntl.LOCK_EX | fcntl.LOCK_NB)  # as `indexer reindex` holds it
        with pytest.raises(IndexerOfflineError, match="left from one that stopped"):
            discover(url_file, token_file)
        held.append(os.open(serving, os.O_RDWR))
        fcntl.flock(held[1], fcntl.LOCK_EX | fcntl.LOCK_NB)  # as `indexer serve` holds both
        assert discover(url_file, token_file).url == "http://127.0.0.1:9/mcp"
    finally:
        for fd in held:
            os.close(fd)
    serving.unlink()  # deleted, or never made by the (older) indexer that ran here
    with pytest.raises(IndexerOfflineError, match="left from one that stopped"):
        discover(url_file, token_file)
    os.mkfifo(serving)  # no server made that: none holds it
    with pytest.raises(IndexerOfflineError, match="left from one that stopped"):
        discover(url_file, token_file)
    serving.unlink()
    workspace_lock.unlink()  # no indexer ever ran here: a URL file written by hand
    assert discover(url_file, token_file).url == "http://127.0.0.1:9/mcp"
    (tmp_path / ".indexer").chmod(0)  # not this user's to look into (root: readable anyway)
    if os.geteuid() != 0:
        assert discover(url_file, token_file).url == "http://127.0.0.1:9/mcp"
    (tmp_path / ".indexer").chmod(0o700)


def test_a_server_starting_removes_a_crashed_ones_url_file_before_it_says_it_serves(
    tmp_path: Path,
) -> None:
    """A server restarting after a crash said it served (the serving lock) seconds before
    it wrote its URL file: clients took the crashed one's for its, and sent the token to
    whatever had taken that port."""
    from indexer.workspace_lock import workspace_lock
    from shared.workspace import Workspace, server_serving

    workspace = Workspace(tmp_path)
    url_file, token_file = workspace.url_file, workspace.token_file
    url_file.write_text("http://127.0.0.1:9/mcp\n")
    with workspace_lock(workspace, serving=True):
        assert server_serving(workspace) is True
        assert not url_file.exists()
        with pytest.raises(IndexerOfflineError, match="no indexer URL file"):
            discover(url_file, token_file)


def test_a_lock_file_that_is_no_file_tells_nothing(tmp_path: Path) -> None:
    """A FIFO at the lock's place held every agent-client command in its open."""
    import os
    import time

    from shared.workspace import lock_held

    lock = tmp_path / "lock"
    os.mkfifo(lock)
    began = time.monotonic()
    assert lock_held(lock) is None and time.monotonic() - began < 1


def test_discover_refuses_a_url_file_another_user_could_have_written(tmp_path: Path) -> None:
    """A URL file another user owns, or may rewrite, may name that user's server: the
    client sent it the bearer token. Refused in words saying what to run."""
    import os

    url_file, token_file = tmp_path / "indexer.mcp.url", tmp_path / "indexer.mcp.token"
    token_file.write_text("s3cret\n")
    url_file.write_text("http://127.0.0.1:1234/mcp\n")
    url_file.chmod(0o666)
    with pytest.raises(IndexerOfflineError, match=r"writable by other users.*chmod go-w"):
        discover(url_file, token_file)
    url_file.chmod(0o664)
    with pytest.raises(IndexerOfflineError, match="writable by other users"):
        discover(url_file, token_file)
    url_file.chmod(0o644)
    assert discover(url_file, token_file).url == "http://127.0.0.1:1234/mcp"
    if os.getuid() == 0:  # (only root can give a file away)
        os.chown(url_file, 65534, 65534)
        with pytest.raises(IndexerOfflineError, match="belongs to user 65534"):
            discover(url_file, token_file)
