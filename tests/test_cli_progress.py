"""The plain progress lines of ``indexer reindex`` and ``indexer summarize`` (a pipe, a
log): each names its command as the command's refusals and notices do."""

from __future__ import annotations

import io

from indexer.cli.index import progress_display


def test_plain_progress_lines_start_with_the_command() -> None:
    """``summarize: 5/5 folders looked at`` left out the ``indexer `` that the same
    command's refusals and notices say (``indexer summarize: ...``). A line comes at
    most every 2 s, and the last one always."""
    stream = io.StringIO()  # (no terminal: plain lines, no bar)
    with progress_display(
        stream, "summarizing folders", "summarize", "{done}/{total} done"
    ) as show:
        for done in range(1, 4):
            show(done, 3)
    assert stream.getvalue().splitlines() == [
        "indexer summarize: 1/3 done",
        "indexer summarize: 3/3 done",
    ]
