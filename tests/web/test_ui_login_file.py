"""``indexer open`` with a token, through the system browser as it launches it: the
page logs in, and the one-time code is on no process's command line (another local
user reads every /proc/*/cmdline, and could redeem a code it finds there first).

The browser is Debian's Chromium, started the way ``webbrowser`` starts any browser
($BROWSER), headless, with a debugging port the test watches the page through."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.browser import CHROMIUM_FLAGS, chromium_path
from helpers.indexer_process import RunningIndexer, wait_for
from helpers.ui_page import seeded_token_server
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, sync_playwright

TOKEN = "browser-file-login-token"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    # (the token from the environment: --token is on the server's own command line)
    ws = tmp_path_factory.mktemp("login-file") / "ws"
    yield from seeded_token_server(ws, TOKEN, env={"INDEXER_MCP_TOKEN": TOKEN})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def browser_script(folder: Path, port: int) -> Path:
    """A $BROWSER that starts Chromium in the background and returns, as xdg-open does;
    it notes the arguments it was given and the browser's pid."""
    flags = " ".join(CHROMIUM_FLAGS)
    script = folder / "browser.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" >> "{folder}/argv"\n'
        f'"{chromium_path()}" --headless {flags} --remote-debugging-port={port} '
        f'--user-data-dir="{folder}/profile" "$1" >"{folder}/chromium.log" 2>&1 &\n'
        f'echo $! > "{folder}/pid"\n'
    )
    script.chmod(0o700)
    return script


def every_command_line() -> list[bytes]:
    lines = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines.append((entry / "cmdline").read_bytes())
            except OSError:
                continue
    return lines


def stop_browser(folder: Path) -> None:
    try:
        pid = int((folder / "pid").read_text())
    except (OSError, ValueError):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, 15)


def test_open_logs_in_with_no_code_on_any_command_line(
    guarded: RunningIndexer, tmp_path: Path
) -> None:
    base = guarded.url.removesuffix("/mcp")
    port = free_port()
    script = browser_script(tmp_path, port)
    env = {**os.environ, "BROWSER": str(script)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "indexer", "open", "--workspace", str(guarded.workspace)],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        code = _code_in(Path((tmp_path / "argv").read_text().strip().removeprefix("file://")))
        with sync_playwright() as playwright:
            browser = wait_for(
                lambda: _connect(playwright, port), 30, interval=0.2, what="the browser"
            )
            page: Page = wait_for(
                lambda: next((p for c in browser.contexts for p in c.pages), None),
                30,
                interval=0.1,
                what="the browser's tab",
            )
            try:
                wait_for(lambda: _address(page) == f"{base}/ui/", 30, interval=0.1, what="/ui/")
            except TimeoutError:
                pytest.fail(f"the tab stayed at {_address(page)}: {page.content()[:600]}")
            page.wait_for_selector('body[data-ready=""]', state="attached", timeout=30_000)
            assert page.locator('a.vault[data-lang="lg"]').inner_text().count("1 note") == 1
            (cookie,) = [c for c in page.context.cookies() if c["name"].startswith("vault_ui")]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
            lines = every_command_line()
            browser.close()
    finally:
        stop_browser(tmp_path)
    given = (tmp_path / "argv").read_text()
    assert "code" not in given and TOKEN not in given, given
    assert given.startswith("file://"), given
    chromium_lines = [line for line in lines if b"remote-debugging-port" in line]
    assert chromium_lines, "the browser's processes were not seen"
    # (the code itself, and any login link: a line merely holding "code=" is another
    # program's, e.g. a CI harness's "exit_code=")
    secrets_seen = (code.encode(), TOKEN.encode(), b"login?code=", b"login#code=")
    assert not [line for line in lines if any(s in line for s in secrets_seen)]
    # the file the browser was given: the user's alone, in a folder of the user's alone
    opened = Path(given.strip().removeprefix("file://"))
    folder = opened.parent.stat()
    assert folder.st_uid == os.getuid() and stat.S_IMODE(folder.st_mode) == 0o700
    if opened.exists():
        assert stat.S_IMODE(opened.stat().st_mode) == 0o600


def _address(page: Page) -> str:
    """The tab's address as its document has it. (``page.url`` is Playwright's record
    of the navigations it heard: attached over CDP while the login page was already
    leaving, it missed one and kept the file's address, the /ui/ page shown, at load 12.)"""
    try:
        return str(page.evaluate("location.href"))
    except PlaywrightError:  # (between two documents)
        return ""


def _code_in(page_file: Path) -> str:
    """The one-time code the login page leads to (read while the page is there)."""
    found = re.search(r"#code=([^\"&<>\s]+)", page_file.read_text())
    assert found, page_file.read_text()
    assert len(found.group(1)) >= 16, found.group(1)
    return found.group(1)


def _connect(playwright, port: int):  # type: ignore[no-untyped-def]
    try:
        return playwright.chromium.connect_over_cdp(f"http://127.0.0.1:{port}", timeout=2_000)
    except Exception:
        time.sleep(0.2)
        return None
