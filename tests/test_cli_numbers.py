"""Numbers on the command lines and in the settings read as REST reads them: ASCII
digits (``-?[0-9]+``). Python's ``int`` took ``--limit ٣`` as 3 (and ``1_000``, ``+5``)
where ``GET .../search?limit=٣`` is refused; each is now refused with one line naming
the option (exit 2), and nothing on disk changes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agent_client.cli import main as agent_main
from agent_client.settings import ClientSettings
from indexer.cli import main as indexer_main
from indexer.settings import Settings
from shared.errors import ConfigError
from shared.numerals import real, whole

NOT_ASCII = ["٣", "۳", "३", "๓", "３", "1_0", "+5", " 5", "²"]


def exit_of(main: Callable[[list[str]], int], argv: list[str]) -> int:
    """A CLI's exit status in-process (argparse's usage errors exit by ``SystemExit``)."""
    try:
        return main(argv)
    except SystemExit as stop:
        return int(stop.code or 0)


def files(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    vault = tmp_path / "ws" / "memory" / "languages" / "en" / "vault"
    vault.mkdir(parents=True)
    (vault / "a.md").write_text("# a\nthree\n")
    return tmp_path / "ws"


@pytest.mark.parametrize("text", NOT_ASCII)
@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["search", "--lang", "en", "three", "--limit"], "--limit"),
        (["search", "--lang", "en", "three", "--offset"], "--offset"),
        (["history", "--lang", "en", "a.md", "--limit"], "--limit"),
        (["history", "--lang", "en", "a.md", "--show"], "--show"),
    ],
)
def test_indexer_refuses_digits_rest_refuses(
    ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str], option: str, text: str
) -> None:
    before = files(ws)
    assert exit_of(indexer_main, [*argv, text, "--workspace", str(ws)]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: not a whole number in ASCII digits: {text!r}" in err
    assert files(ws) == before


@pytest.mark.parametrize("text", NOT_ASCII)
@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["search", "three", "--limit"], "--limit"),
        (["search", "three", "--offset"], "--offset"),
        (["recall", "three", "--budget"], "--budget"),
        (["history", "a.md", "--limit"], "--limit"),
        (["history", "a.md", "--show"], "--show"),
        (["history", "a.md", "--diff", "1", "--to"], "--to"),
    ],
)
def test_agent_client_refuses_digits_rest_refuses(
    ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str], option: str, text: str
) -> None:
    before = files(ws)
    assert exit_of(agent_main, [*argv, text, "--workspace", str(ws), "--lang", "en"]) == 2
    err = capsys.readouterr().err
    assert f"argument {option}: not a whole number in ASCII digits: {text!r}" in err
    assert files(ws) == before


def test_the_limit_of_agent_client_history_is_usage_as_the_others(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Its range was checked after parsing, in other words than its neighbours'."""
    argv = ["history", "a.md", "--limit", "1001", "--workspace", str(ws)]
    assert exit_of(agent_main, argv) == 2
    assert "argument --limit: must be a whole number of at most 1000" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["٣", "1_0", "３"])
def test_indexer_settings_refuse_them_by_flag_and_by_variable(
    ws: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    before = files(ws)
    with pytest.raises(
        ConfigError,
        match=rf"--port must be a whole number from 0 to 65535 in ASCII digits, not .{text}.$",
    ):
        Settings.resolve({"workspace": str(ws), "port": text}, {})
    with pytest.raises(ConfigError, match=r"INDEXER_HEADER_TIMEOUT must be a number .*ASCII"):
        Settings.resolve({"workspace": str(ws)}, {"INDEXER_HEADER_TIMEOUT": text})
    with pytest.raises(ConfigError, match=r"INDEXER_MAX_CONNECTIONS must be a whole number"):
        Settings.resolve({"workspace": str(ws)}, {"INDEXER_MAX_CONNECTIONS": text})
    # --maintenance-min-interval-hours was argparse's float: ٣ taken, "x" refused in usage lines
    argv = ["maintain", "--workspace", str(ws), "--maintenance-min-interval-hours", text]
    assert exit_of(indexer_main, argv) == 2
    err = capsys.readouterr().err
    assert err == (
        "indexer maintain: --maintenance-min-interval-hours must be a number from 0 to 87600"
        f" in ASCII digits and '.', not {text!r}\n"
    )
    assert files(ws) == before


def test_indexer_settings_still_take_ascii_numbers(ws: Path) -> None:
    settings = Settings.resolve(
        {"workspace": str(ws), "port": "8080", "maintenance_min_interval_hours": "1.5"},
        {"INDEXER_HEADER_TIMEOUT": " 2.5 ", "INDEXER_MAX_CONNECTIONS": "7\n"},
    )
    assert settings.port == 8080 and settings.maintenance.min_interval_hours == 1.5
    assert settings.limits.header_timeout == 2.5 and settings.limits.max_connections == 7


@pytest.mark.parametrize("text", ["٣", "1_0", "３"])
def test_agent_client_settings_refuse_them(ws: Path, text: str) -> None:
    with pytest.raises(ConfigError, match=r"AGENT_CLIENT_CALL_TIMEOUT .* ASCII digits and '.'"):
        ClientSettings.resolve({"workspace": str(ws)}, {"AGENT_CLIENT_CALL_TIMEOUT": text})
    with pytest.raises(ConfigError, match=r"AGENT_CLIENT_LLM_MAX_STEPS .* in ASCII digits"):
        ClientSettings.resolve({"workspace": str(ws)}, {"AGENT_CLIENT_LLM_MAX_STEPS": text})
    settings = ClientSettings.resolve(
        {"workspace": str(ws)},
        {"AGENT_CLIENT_CALL_TIMEOUT": "2.5", "AGENT_CLIENT_LLM_MAX_STEPS": " 3"},
    )
    assert settings.call_timeout == 2.5


def test_the_rule() -> None:
    assert [whole(t) for t in ("0", "-3", "007", "1" * 40, "-" + "1" * 40)] == [
        0,
        -3,
        7,
        10**30,
        -(10**30),
    ]
    assert all(whole(t) is None for t in [*NOT_ASCII, "", "-", "1.0", "1e3", "١٢"])
    assert [real(t) for t in ("1", "0.5", ".5", "5.", "2e3", "-1")] == [1, 0.5, 0.5, 5, 2000, -1]
    assert all(real(t) is None for t in ["inf", "nan", "١.٥", "1_0.5", "", ".", "1e", "0x10"])
