"""Both commands run in Python's UTF-8 mode, whatever the locale's encoding.

The vaults' names are UTF-8 (SPEC). Under a locale whose encoding is another (say
``en_US.ISO-8859-1``), Python decodes file names and the arguments with it: an Arabic
file name read as Latin-1 holds C1 control characters, so the vault refused it ("the
path contains a control character"), and an Arabic query was searched as mojibake.
(The C locale is fine: Python turns UTF-8 mode on for it.) So a command started so
starts itself again at once in UTF-8 mode (``-X utf8``), with the same argument bytes
and the same process id. A terminal still gets its locale's encoding, with what it
cannot show written as ``\\uNNNN`` (UTF-8 bytes there would show as mojibake); a pipe
or a file gets UTF-8, as the notes are.
"""

from __future__ import annotations

import contextlib
import io
import locale
import os
import sys

from shared.start_again import start_again

__all__ = ["in_utf8_mode"]


def in_utf8_mode() -> None:
    """Called first in a command's ``main`` (the process's own command line, not a
    test's arguments): start again with ``-X utf8`` where the file system encoding is
    not UTF-8, else fit the terminal's streams to its locale."""
    if not sys.flags.utf8_mode and not _is_utf8(sys.getfilesystemencoding()):
        start_again(("-X", "utf8"))  # (returns only where it cannot: as before)
        return
    if sys.flags.utf8_mode:
        for name in ("stdout", "stderr"):
            _to_terminal_encoding(getattr(sys, name))


def _is_utf8(encoding: str) -> bool:
    return encoding.lower().replace("-", "").replace("_", "") in ("utf8", "cp65001")


def _to_terminal_encoding(stream: object) -> None:
    """A terminal of a locale that is not UTF-8 gets that encoding, escaping the rest."""
    if not isinstance(stream, io.TextIOWrapper) or os.environ.get("PYTHONIOENCODING"):
        return  # (an encoding asked for is kept)
    try:
        if not stream.isatty():
            return
    except (OSError, ValueError):
        return
    encoding = locale.getencoding()  # the locale's own, whatever UTF-8 mode says
    if _is_utf8(encoding) or encoding.upper() in ("ANSI_X3.4-1968", "ASCII", "US-ASCII"):
        return  # (ASCII: the C locale, for which UTF-8 mode is Python's own choice)
    with contextlib.suppress(LookupError, OSError, ValueError):
        stream.reconfigure(encoding=encoding, errors="backslashreplace")
