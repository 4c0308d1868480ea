"""Command-line usage both programs share: argparse's own messages, made plainer."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def refuse_options_before_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """``prog --workspace W status`` reads to argparse as a command named ``W`` ("invalid
    choice: 'W'"): say instead that the options go after the command (exit 2)."""
    own = {option for action in parser._actions for option in action.option_strings}
    first = argv[0] if argv else ""
    if first.startswith("-") and first.split("=", 1)[0] not in own:
        parser.error(f"options go after the command: {parser.prog} COMMAND {first} ...")
