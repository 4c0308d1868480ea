"""What the browser page's tests share: a watched tab, and waiting for a view."""

from __future__ import annotations

import ssl
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page

from helpers.indexer_process import RunningIndexer, serving

MD = {"Content-Type": "text/markdown"}
TEXT = {"Content-Type": "text/plain"}
# API refusals the page expects (a 412 conflict, a hostile note's broken image) are
# logged by Chromium too; they are not errors of the page.
EXPECTED_REFUSAL = "Failed to load resource: the server responded with a status of 4"
# One TLS context for put's clients, made once: a client made without one loads the CA
# bundle (75 ms a client at load ~12, where these requests are plain HTTP; a test of 61
# puts spent 4.6 s on it).
_TLS = ssl.create_default_context()


def put(base: str, lang: str, path: str, text: str) -> None:
    """A note written through REST, as an agent beside the page would."""
    with httpx2.Client(base_url=base + "/api/v1", verify=_TLS) as http:
        assert http.put(f"/{lang}/notes/{path}", content=text.encode(), headers=MD).is_success


class Watch:
    """What a page did that it should not: dialogs, errors, CSP reports."""

    def __init__(self, page: Page) -> None:
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda err: self.errors.append(str(err)))
        page.on("console", self._console)
        self.accept_dialogs = False

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.accept() if self.accept_dialogs else dialog.dismiss()

    def _console(self, message: ConsoleMessage) -> None:
        expected = message.text.startswith(EXPECTED_REFUSAL)
        if message.type in ("error", "warning") and not expected:
            self.errors.append(message.text)


@contextmanager
def watched_page(browser: Browser) -> Iterator[tuple[Page, Watch]]:
    """A tab of its own (a fresh context), closed afterwards."""
    context = browser.new_context(viewport={"width": 1100, "height": 780})
    tab = context.new_page()
    tab.set_default_timeout(10_000)
    try:
        yield tab, Watch(tab)
    finally:
        context.close()


def visit(page: Page, base: str, hash_: str) -> None:
    page.goto(f"{base}/ui/{hash_}")
    settled(page, hash_)


def settled(page: Page, hash_: str) -> None:
    """Wait until the page has finished rendering the view of ``hash_``."""
    page.wait_for_selector(f'body[data-ready="{hash_}"]', state="attached")


def note_file(server: RunningIndexer, lang: str, path: str) -> Path:
    return server.workspace / "memory" / "languages" / lang / "vault" / path


def open_link(server: RunningIndexer) -> str:
    """The login link ``indexer open --print`` gives for ``server``'s workspace."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "indexer",
            "open",
            "--workspace",
            str(server.workspace),
            "--print",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.strip()


def seeded_token_server(
    workspace: Path, token: str, *args: str, env: dict | None = None
) -> Iterator[RunningIndexer]:
    """A server behind ``token`` with one note (``lg/hello.md``) for the page's login
    tests to open, for a fixture to ``yield from``: stopped afterwards."""
    servers = serving(workspace, *args, env=env)
    running = next(servers)
    try:
        with httpx2.Client(base_url=running.url.removesuffix("/mcp")) as http:
            note = http.put(
                "/api/v1/lg/notes/hello.md",
                content=b"# Hello\n\nbehind a token\n",
                headers={"Content-Type": "text/markdown", "Authorization": f"Bearer {token}"},
            )
            assert note.status_code == 201
        yield running
    finally:
        servers.close()  # (stops it)
