"""REST reads a query's number by the rule the command lines read one (``shared.numerals``:
``-?[0-9]+`` in ASCII digits), against a real ``indexer serve``: ``?limit=--5`` passed
its check (``'--5'.lstrip('-')`` is digits) and failed in ``int()``, a 500 ``internal``
where ``indexer search --limit --5`` is refused; and ``?limit=`` of 25 digits with
leading zeros (``indexer search --limit 000…05`` lists five) was "out of range"."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, vault_dir
from helpers.rest_errors import error_message, error_of
from helpers.snapshots import snapshot

from shared.numerals import whole

NOT_NUMBERS = ["--5", "---1", "-", "+5", "٣", "1_0", " 5", "5 ", "0x5", "--"]


@pytest.fixture(scope="module")
def http(server: RunningIndexer) -> Iterator[httpx2.Client]:
    base = server.url.removesuffix("/mcp") + "/api/v1"
    with httpx2.Client(base_url=base, timeout=30) as client:
        yield client


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_what_is_no_number_is_refused_as_the_command_line_refuses_it(
    http: httpx2.Client, server: RunningIndexer, text: str
) -> None:
    http.put("/un/notes/n.md", content=b"# word\n", headers={"Content-Type": "text/markdown"})
    before = snapshot(vault_dir(server, "un"))
    assert whole(text) is None  # (the command lines' reading)
    for response in (
        http.get("/un/search", params={"q": "word", "limit": text}),
        http.get("/un/notes/n.md", params={"offset": text}),
        http.get("/un/history/n.md", params={"limit": text}),
    ):
        assert response.status_code == 400, (response.request.url, response.text)
        assert error_of(response) == "invalid_argument"
        assert "must be a whole number" in error_message(response)
    assert snapshot(vault_dir(server, "un")) == before


def test_leading_zeros_read_as_the_number_they_spell(http: httpx2.Client) -> None:
    http.put("/uz/notes/n.md", content=b"# word\n", headers={"Content-Type": "text/markdown"})
    text = "0" * 24 + "5"
    assert whole(text) == 5
    got = http.get("/uz/search", params={"q": "word", "limit": text})
    assert got.status_code == 200, got.text
    assert got.json() == http.get("/uz/search", params={"q": "word", "limit": "5"}).json()
    past = http.get("/uz/search", params={"q": "word", "limit": "9" * 25})
    assert past.status_code == 400 and error_of(past) == "invalid_argument"
