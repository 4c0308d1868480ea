"""Note text on a terminal: escape sequences are shown, never run."""

from __future__ import annotations

import io
import logging

from agent_client.terminal import TerminalFormatter, for_terminal


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_control_characters_are_spelled_out_on_a_terminal_only() -> None:
    hostile = "title \x1b]0;PWNED\x07 body \x1b[2J\tok\nnext \x9b line \x00"
    shown = for_terminal(hostile, Terminal())
    assert shown == "title \\x1b]0;PWNED\\x07 body \\x1b[2J\tok\nnext \\x9b line \\x00"
    assert "\x1b" not in shown and "\x07" not in shown
    assert for_terminal(hostile, io.StringIO()) == hostile  # a pipe or a file: as it is
    assert for_terminal("日本語 ünïcode ✓", Terminal()) == "日本語 ünïcode ✓"
    # a bidi override can turn the rest of the line around on a terminal that lays out bidi
    assert for_terminal("gpj.\u202eexe \u2067x\u2069 עברית", Terminal()) == (
        "gpj.\\u202eexe \\u2067x\\u2069 עברית"
    )


def test_log_lines_on_a_terminal_are_spelled_out_too() -> None:
    """An LLM endpoint's error message went to stderr with its ESC bytes."""
    formatter = TerminalFormatter("%(levelname)s %(message)s", Terminal())
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed (%s)", ("\x1b[2J",), None)
    assert formatter.format(record) == "ERROR failed (\\x1b[2J)"
