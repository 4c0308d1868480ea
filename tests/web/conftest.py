"""The browser page's tests share one Chromium per module and a watched tab per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.browser import chromium
from helpers.ui_page import Watch, watched_page
from playwright.sync_api import Browser, Page


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Browser) -> Iterator[tuple[Page, Watch]]:
    with watched_page(browser) as watched:
        yield watched
