"""Command-line usage both programs share: argparse's own messages, made plainer."""

from __future__ import annotations

import argparse
import contextlib
import errno
import itertools
import os
import pwd
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from shared.errors import MAX_WHOLE_NUMBER
from shared.numerals import WHOLE_WORDS, whole
from shared.terminal_text import for_terminal

EXIT_INTERRUPTED = 130  # as a shell reports a process stopped by Ctrl-C


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose "expected one argument" says how to pass a value that
    starts with ``-`` (``--title ---`` reads to argparse as a second option): after
    ``=``, as in ``--title=---``; not where the option came last, with no value at all.
    Subcommands' parsers are of this class too."""

    def parse_known_args(  # type: ignore[override]  # (typeshed's overloads)
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(self._argv, namespace)

    def error(self, message: str) -> NoReturn:
        if message.startswith("argument -") and message.endswith(": expected one argument"):
            spellings = message.removeprefix("argument ").split(":", 1)[0].split("/")
            if _followed_by_a_dash(getattr(self, "_argv", ()), spellings):
                hint = f"{spellings[-1]}=VALUE"
                message += f" (a value that starts with '-' goes after '=': {hint})"
        # ("unrecognized arguments" quotes the words as typed: an escape in one is shown)
        super().error(for_terminal(message, sys.stderr))


def say_refusal(line: str) -> None:
    """A command's one line of refusal on stderr; on a terminal, the control characters
    of what it quotes (a typed path, a server's words) spelled out, never obeyed."""
    print(for_terminal(line, sys.stderr), file=sys.stderr)


def say_notice(line: str) -> None:
    """A command's notice on stderr (``indexer summarize: the running indexer ...``), escaped on
    a terminal as a refusal is: it quotes a workspace path or a server's words too."""
    print(for_terminal(line, sys.stderr), file=sys.stderr)


def _followed_by_a_dash(argv: Sequence[str], spellings: Sequence[str]) -> bool:
    """Whether one of the option's ``spellings`` (or a long one's abbreviation, which
    argparse takes) is followed in ``argv`` by a word that starts with ``-``."""
    for word, after in itertools.pairwise(argv):
        named = word in spellings or (
            word.startswith("--") and any(s.startswith(word) for s in spellings)
        )
        if named and after.startswith("-"):
            return True
    return False


def refuse_options_before_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """``prog --workspace W status`` reads to argparse as a command named ``W`` ("invalid
    choice: 'W'"): say instead that the options go after the command (exit 2)."""
    own = {option for action in parser._actions for option in action.option_strings}
    first = argv[0] if argv else ""
    if first.startswith("-") and first.split("=", 1)[0] not in own:
        parser.error(f"options go after the command: {parser.prog} COMMAND {first} ...")


def whole_number(low: int, high: int = MAX_WHOLE_NUMBER) -> Callable[[str], int]:
    """An argparse ``type``: a whole number from ``low`` to ``high`` (bad usage, exit 2,
    otherwise).

    Checked here, as ``--limit`` of ``history`` is, rather than sent: the server's
    refusal of ``--show -1`` exited 1 ("refused"), not 2 like every other bad argument.
    The default top is the largest number the index can store.
    """

    def parse(text: str) -> int:
        number = whole(text)  # (ASCII digits, as REST reads them: not int()'s ٣ or 1_000)
        if number is None:
            raise argparse.ArgumentTypeError(f"not a whole number in {WHOLE_WORDS}: {text[:40]!r}")
        if number < low:
            raise argparse.ArgumentTypeError(f"must be a whole number of at least {low}")
        if number > high:
            if high < MAX_WHOLE_NUMBER:
                raise argparse.ArgumentTypeError(f"must be a whole number of at most {high}")
            raise argparse.ArgumentTypeError(f"a whole number too large: {text[:40]}")
        return number

    parse.__name__ = "whole number"  # what argparse names in "invalid ... value"
    return parse


def standard_streams() -> None:
    """Put ``/dev/null`` on a standard descriptor (0, 1, 2) the process was started
    without (``indexer status >&-``, a daemon's ``<&- >&-``), and a stream on it.

    Python leaves ``sys.stdout`` None there, and the flush at the end raised
    AttributeError; the next file opened took the free descriptor, so a server's lock
    files sat on 0 and 1, where any stray write to standard output would land. What a
    command prints to a closed output is dropped, as Python's own ``print`` drops it.
    """
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        null = os.open(os.devnull, os.O_RDWR)  # (the lowest free descriptor: ``fd``)
        if null != fd:  # (only where a lower one was free too: never, in order)
            os.dup2(null, fd)
            os.close(null)
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, encoding="utf-8", closefd=False))  # noqa: SIM115


def said_of_os_error(err: OSError) -> str:
    """What the system refused a command, in words that say what to do: Python's own
    ``[Errno 13] Permission denied: '/w/.indexer/index.sqlite'`` said neither why this
    user may not (the workspace is another's: a server run by root or a service user
    keeps its state folder 0700) nor what to do."""
    why = err.strerror or str(err)
    if err.filename is None:
        return why
    where = os.fsdecode(err.filename)
    if err.errno not in (errno.EACCES, errno.EPERM):
        return f"{where}: {why}"
    me, owner = _user(os.geteuid()), _owner_of(Path(where))
    theirs = f" ({owner[0]} belongs to {owner[1]})" if owner and owner[1] != me else ""
    return (
        f"{where}: permission denied to this user ({me}){theirs}: run the"
        " command as the user who runs the indexer on this workspace, or give this user"
        " access to it"
    )


def _owner_of(path: Path) -> tuple[Path, str] | None:
    """The nearest of ``path`` and its folders this user may look at, with its owner."""
    for place in (path, *path.parents):
        try:
            return place, _user(place.stat().st_uid)
        except OSError:
            continue
    return None


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def stdout_closed() -> int:
    """The reader of our output went away (``indexer history ... | head -1``): say nothing
    (a pipe closed early is no error to report) and keep the exit's own flush quiet.
    Exit status 1, as Python's documentation does it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 1


def exit_with(code: int) -> NoReturn:
    """End the process with ``code``, and after a Ctrl-C with nothing else.

    Under ``python -m``, CPython 3.11 ends a process by SIGINT (status -2) whatever it
    returns once a ``KeyboardInterrupt`` has left an ``exec`` of a string, as it does
    when Ctrl-C lands while the SDKs build their classes, though the command caught it.
    """
    if code != EXIT_INTERRUPTED:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
