"""Headless Chromium for the page's tests: Debian's browser, driven by Playwright.

Playwright's own browser download is never used (no downloads here): the system
``chromium`` is launched by path. A missing browser fails loudly: CI installs it
(``.ci/run``), and a green run without the browser tests would hide a broken page.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Browser, sync_playwright

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
]


def chromium_path() -> str:
    """The system Chromium (``CHROMIUM`` overrides), or a failed test saying how to get it."""
    path = (
        os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    )
    if not path:
        pytest.fail(
            "the browser tests need Debian's Chromium: run `apt-get install -y chromium "
            "chromium-driver` (.ci/run does), or set CHROMIUM=/path/to/chromium",
            pytrace=False,
        )
    return path


@contextmanager
def chromium() -> Iterator[Browser]:
    """One headless browser (a fresh temporary profile each launch)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield browser
        finally:
            browser.close()
