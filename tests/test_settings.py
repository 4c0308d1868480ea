"""The indexer's settings: every odd value is one line naming the setting (exit 2), never
a traceback later (``inf`` overflowed at start; ``nan`` timed out every request)."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.cli import main
from indexer.settings import SETTINGS_HELP, Settings

NUMBERS = [
    "INDEXER_PORT",
    "INDEXER_MAX_FILE_BYTES",
    "INDEXER_HISTORY_DAYS",
    "INDEXER_SCAN_THREADS",
    "INDEXER_SUMMARIES_MAX_CHILDREN",
    "INDEXER_SUMMARIES_DEBOUNCE",
    "INDEXER_MAX_CONNECTIONS",
    "INDEXER_HEADER_TIMEOUT",
    "INDEXER_BODY_TIMEOUT",
    "INDEXER_MIN_BODY_RATE",
    "INDEXER_MAX_REQUESTS",
    "INDEXER_MAX_LARGE_BODIES",
    "INDEXER_SESSION_IDLE_TIMEOUT",
    "INDEXER_SESSION_HANDSHAKE_TIMEOUT",
    "INDEXER_MAX_SESSIONS",
    "INDEXER_MAINTENANCE_MIN_INTERVAL_HOURS",
    "INDEXER_MAINTENANCE_CHECK_MINUTES",
    "INDEXER_MAINTENANCE_DEBOUNCE_SECONDS",
    "INDEXER_MAINTENANCE_TIMEOUT",
    "INDEXER_MAINTENANCE_MAX_STEPS",
    "INDEXER_LLM_MAX_CONCURRENCY",
    "INDEXER_LLM_TIMEOUT",
    "INDEXER_LLM_MAX_TOKENS",
]


def resolve(tmp_path: Path, **environ: str) -> Settings:
    return Settings.resolve({"workspace": str(tmp_path)}, {"INDEXER_LLM_MODEL": "m", **environ})


def test_the_defaults_resolve(tmp_path: Path) -> None:
    assert set(NUMBERS) <= set(SETTINGS_HELP)
    settings = resolve(tmp_path)
    assert settings.port == 0 and settings.token is None


@pytest.mark.parametrize("env", NUMBERS)
@pytest.mark.parametrize("value", ["inf", "nan", "-1", "1e400", "abc", "99999999999999"])
def test_an_odd_number_names_its_setting(tmp_path: Path, env: str, value: str) -> None:
    if (value == "-1" and env in ("INDEXER_HISTORY_DAYS",)) or env.endswith("SCAN_THREADS"):
        value = "-1" if value == "-1" else value
    with pytest.raises(ValueError, match=env):
        resolve(tmp_path, **{env: value})


@pytest.mark.parametrize("token", [" secret", "secret ", "   ", "pässwörd", "a\tb"])
def test_a_token_no_client_could_send_is_refused(tmp_path: Path, token: str) -> None:
    with pytest.raises(ValueError, match="INDEXER_MCP_TOKEN"):
        resolve(tmp_path, INDEXER_MCP_TOKEN=token)
    assert resolve(tmp_path, INDEXER_MCP_TOKEN="s3cr-t_!").token == "s3cr-t_!"


@pytest.mark.parametrize(
    "url", ["http://[::1", "http://127.0.0.1:99999/v1", "localhost:8080/v1", "file:///etc"]
)
def test_a_model_url_no_client_could_use_is_refused(tmp_path: Path, url: str) -> None:
    """Taken as given, each failed every model call with a traceback (httpx's InvalidURL,
    an OverflowError), and every summaries pass with it, fallback included."""
    with pytest.raises(ValueError, match="INDEXER_LLM_BASE_URL"):
        resolve(tmp_path, INDEXER_LLM_BASE_URL=url)
    with pytest.raises(ValueError, match="INDEXER_LLM_BASE_URL"):  # before a model is set
        resolve(tmp_path, INDEXER_LLM_BASE_URL=url, INDEXER_LLM_MODEL="")
    for good in ("http://127.0.0.1:8080/v1", "https://api.example.com/v1", "http://[::1]:80"):
        assert resolve(tmp_path, INDEXER_LLM_BASE_URL=good).model.base_url == good  # type: ignore[union-attr]


def test_a_model_answers_length_is_a_setting(tmp_path: Path) -> None:
    """2048 tokens held a summary, not a rewritten USER.md of some thousand words (the
    answer was cut and every maintenance run failed): the limit is the user's to raise."""
    assert resolve(tmp_path).model.max_tokens == 2048  # type: ignore[union-attr]
    raised = resolve(tmp_path, INDEXER_LLM_MAX_TOKENS="16384")
    assert raised.model.max_tokens == 16384  # type: ignore[union-attr]
    for odd in ("0", "2.5", "1000001"):
        with pytest.raises(ValueError, match="INDEXER_LLM_MAX_TOKENS"):
            resolve(tmp_path, INDEXER_LLM_MAX_TOKENS=odd)


def test_serve_says_it_in_one_line_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INDEXER_MAX_CONNECTIONS", "inf")
    assert main(["serve", "--workspace", str(tmp_path / "ws")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "INDEXER_MAX_CONNECTIONS must be" in err


def test_a_bad_value_is_named_as_it_was_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--port 99999`` was refused as ``INDEXER_PORT``, which the user never set; and a
    setting refused twice over said its code twice ("config: INDEXER_ONE_CPU ...")."""
    ws = str(tmp_path / "ws")
    assert main(["serve", "--workspace", ws, "--port", "99999"]) == 2
    assert capsys.readouterr().err == (
        "indexer serve: --port must be a whole number from 0 to 65535, not '99999'\n"
    )
    assert main(["serve", "--workspace", ws, "--log-level", "LOUD"]) == 2  # was usage lines
    assert capsys.readouterr().err == (
        "indexer serve: --log-level must be one of DEBUG, INFO, WARNING, ERROR, not 'LOUD'\n"
    )
    assert main(["serve", "--workspace", ws, "--port", "x"]) == 2
    assert capsys.readouterr().err.startswith("indexer serve: --port must be a whole number")
    monkeypatch.setenv("INDEXER_PORT", "x")
    assert main(["serve", "--workspace", ws, "--host", "bad host!"]) == 2
    assert "indexer serve: --host must be" in capsys.readouterr().err
    assert main(["serve", "--workspace", ws]) == 2
    assert capsys.readouterr().err.startswith("indexer serve: INDEXER_PORT must be")
    monkeypatch.setenv("INDEXER_PORT", "0")
    monkeypatch.setenv("INDEXER_ONE_CPU", "maybe")
    assert main(["serve", "--workspace", ws]) == 2
    assert capsys.readouterr().err.startswith("indexer serve: INDEXER_ONE_CPU must be 1 or 0")


@pytest.mark.parametrize(
    "command",
    [
        ["reindex"],
        ["summarize"],
        ["maintain", "--status"],
        ["status"],
        ["search", "--lang", "en", "went"],
        ["history", "--lang", "en", "items/go.md"],
    ],
)
def test_a_command_on_a_mistyped_workspace_makes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """They created ``W/.indexer/`` (and a history) wherever the path pointed; search
    and history said "there is no vault 'en' in W (its vaults: none yet)" and "items/go.md
    has no history and does not exist" (exit 1), of a workspace that is not there."""
    typo = tmp_path / "wrokspace"
    assert main([*command, "--workspace", str(typo)]) == 2
    assert "there is no workspace at" in capsys.readouterr().err
    assert not typo.exists()


@pytest.mark.parametrize(
    "env",
    [
        "INDEXER_SUMMARIES",
        "INDEXER_ECHO_TOOL",
        "INDEXER_MAINTENANCE_USER_PROFILE",
        "INDEXER_ONE_CPU",
    ],
)
def test_an_on_off_setting_refuses_what_is_neither(tmp_path: Path, env: str) -> None:
    """``maybe`` or ``2`` turned the feature off, silently (the client refused them)."""
    for value in ("maybe", "2", "enabled"):
        with pytest.raises(ValueError, match=f"{env} must be 1 or 0"):
            resolve(tmp_path, **{env: value})
    assert resolve(tmp_path, INDEXER_SUMMARIES="off").summaries is False
    assert resolve(tmp_path, INDEXER_SUMMARIES="Yes").summaries is True


@pytest.mark.parametrize(
    "command",
    [["serve"], ["status"], ["search", "--lang", "en", "x"], ["reindex"], ["summarize"]],
)
def test_a_workspace_that_is_a_file_is_bad_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """It printed ``[Errno 20] Not a directory`` (exit 1), or "no workspace (a typo?);
    `indexer serve` makes one", which then failed the same way."""
    afile = tmp_path / "notes.txt"
    afile.write_text("x")
    assert main([*command, "--workspace", str(afile)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert afile.read_text() == "x"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_workspace_no_folder_can_be_made_in_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``/proc/self/x``: mkdir says "no such file" though its parent is there, and
    ``make_folders`` made the parent and tried again, forever: a RecursionError's
    thousand-line traceback. Now the system's answer once, exit 1."""
    assert main(["serve", "--workspace", "/proc/self/x"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("indexer serve: ") and "cannot hold a folder there" in err, err
    assert len(err.splitlines()) == 1 and "Recursion" not in err, err


def test_addresses_prompt_folders_and_prompt_files_are_checked_at_start(tmp_path: Path) -> None:
    """Each was taken as given: ``not a host`` failed as "is the port in use?" (port 0),
    a prompts folder that is not there served no prompts (an empty one is allowed, with
    a warning), a prompt file that is not there failed every maintenance run, retried."""
    for host in ("not a host", "300.1.1.1", "a_b"):
        with pytest.raises(ValueError, match="INDEXER_HOST must be"):
            resolve(tmp_path, INDEXER_HOST=host)
    assert resolve(tmp_path, INDEXER_HOST="[::1]").host == "::1"
    with pytest.raises(ValueError, match="INDEXER_LOG_LEVEL must be one of DEBUG, INFO"):
        resolve(tmp_path, INDEXER_LOG_LEVEL="LOUD")  # was logging's "Unknown level: 'LOUD'"
    assert resolve(tmp_path, INDEXER_LOG_LEVEL=" debug ").log_level == "DEBUG"
    assert resolve(tmp_path, INDEXER_HOST="my-box.local").host == "my-box.local"
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "a-file").write_text("x")
    for folder in (tmp_path / "a-file", tmp_path / "nowhere"):
        with pytest.raises(ValueError, match="INDEXER_PROMPTS_DIR"):
            resolve(tmp_path, INDEXER_PROMPTS_DIR=str(folder))
    assert resolve(tmp_path, INDEXER_PROMPTS_DIR=str(empty)).prompts_dir == empty  # a warning
    env = "INDEXER_MAINTENANCE_USER_PROFILE_PROMPT"
    for prompt in (tmp_path / "missing.md", empty):
        with pytest.raises(ValueError, match=env):
            resolve(tmp_path, **{env: str(prompt)})
    (empty / "latin-1.md").write_bytes("# Caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ValueError, match=f"{env}: .* cannot be read as UTF-8"):
        resolve(tmp_path, **{env: str(empty / "latin-1.md")})  # (each run: a traceback)
    (empty / "latin-1.md").unlink()
    (empty / "mine.md").write_text("# Mine\n")
    assert resolve(tmp_path, INDEXER_PROMPTS_DIR=str(empty)).prompts_dir == empty
    assert resolve(tmp_path, **{env: str(empty / "mine.md")}).maintenance.prompt_files


def test_a_prompts_folder_of_odd_files_serves_what_it_can(tmp_path: Path) -> None:
    """A folder named x.md, a link to nothing, a text not UTF-8 stopped ``serve`` with a
    raw error; a folder without ``maintenance/`` failed every maintenance run."""
    import asyncio

    from fastmcp import Client

    from indexer.daemon import build_core
    from indexer.web.mcp import create_server
    from indexer.wiring import build_maintenance

    folder = tmp_path / "prompts"
    (folder / "dir.md").mkdir(parents=True)
    (folder / "gone.md").symlink_to(tmp_path / "nowhere")
    (folder / "latin.md").write_bytes(b"# caf\xe9\n")
    (folder / "mine.md").write_text("# Mine\n\nmy prompt\n")
    settings = resolve(tmp_path, INDEXER_PROMPTS_DIR=str(folder))
    core = build_core(settings)
    try:

        async def served() -> list[str]:
            async with Client(create_server(core)) as client:
                return [p.name for p in await client.list_prompts()]

        assert asyncio.run(served()) == ["mine"]
        maintenance = build_maintenance(settings, core.vault, core.index, None)
        assert maintenance.prompt("user_profile").strip()  # the shipped one
    finally:
        assert core.jobs is not None and core.index is not None
        core.jobs.stop()
        core.index.close()


@pytest.mark.parametrize(
    ("env", "entry"),
    [
        ("INDEXER_ALLOWED_HOSTS", "http://box:8765"),  # a URL, not a host
        ("INDEXER_ALLOWED_HOSTS", "box/mcp"),
        ("INDEXER_ALLOWED_HOSTS", "my box"),
        ("INDEXER_ALLOWED_HOSTS", "box:99999"),
        ("INDEXER_ALLOWED_HOSTS", ":8765"),
        ("INDEXER_ALLOWED_HOSTS", "[not-v6]:80"),
        ("INDEXER_ALLOWED_ORIGINS", "app.example"),  # no scheme
        ("INDEXER_ALLOWED_ORIGINS", "https://app.example/page"),
        ("INDEXER_ALLOWED_ORIGINS", "ftp://box"),  # no default port to compare
        ("INDEXER_ALLOWED_ORIGINS", "https://"),
        ("INDEXER_ALLOWED_ORIGINS", "1http://box"),
    ],
)
def test_an_allowed_host_or_origin_no_request_could_match_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    env: str,
    entry: str,
) -> None:
    """The Host/Origin guard dropped such an entry, silently: the server started and its
    client was refused 421 or 403, the one place the README says to look being this
    setting. Now it is the start's one line and exit 2, and nothing is made."""
    with pytest.raises(ValueError, match=env):
        resolve(tmp_path, **{env: f"vault.example, {entry}"})
    monkeypatch.setenv(env, entry)
    ws = tmp_path / "ws"
    assert main(["serve", "--workspace", str(ws)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"indexer serve: {env}: {entry!r}" in err
    assert not ws.exists()


def test_the_allowed_hosts_and_origins_the_readme_shows_resolve(tmp_path: Path) -> None:
    hosts = "vault-memory, proxy.example:9443, tool.example:*, *.example.com, [::1]:9000, *"
    origins = "https://app.example, http://tool.example:3000, http://x.example:*, null, *"
    settings = resolve(tmp_path, INDEXER_ALLOWED_HOSTS=hosts, INDEXER_ALLOWED_ORIGINS=origins)
    assert len(settings.allowed_hosts) == 6 and len(settings.allowed_origins) == 5
    assert resolve(tmp_path, INDEXER_ALLOWED_ORIGINS="https://app.example/").allowed_origins
