"""``indexer serve``: run the daemon in the foreground until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import gc
import logging
import os
from typing import Any

from indexer.cli import add_background_options
from indexer.logs import LOG_LEVELS
from shared.errors import ConfigError, words_of
from shared.start_again import start_again


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    serve = commands.add_parser(
        "serve",
        parents=[common],
        help="serve the vaults of a workspace to MCP clients (runs until stopped)",
        description=(
            "Serve the workspace's vaults over MCP (Streamable HTTP) and keep their search "
            "index current. The URL is written to W/indexer.mcp.url once the server "
            "accepts connections, and removed when it stops."
        ),
    )
    serve.add_argument("--host", help="address to bind (default 127.0.0.1; keep it loopback)")
    # --port and --log-level are checked by Settings, as their variables are: refused in
    # one line naming the flag (argparse's type= and choices= printed its usage lines).
    serve.add_argument("--port", help="TCP port (default 0: a free one)")
    serve.add_argument(
        "--token",
        help="require this bearer token of every client (it shows in the process list: "
        "prefer INDEXER_MCP_TOKEN)",
    )
    serve.add_argument(
        "--log-level",
        metavar="{" + ",".join(LOG_LEVELS) + "}",
        help="DEBUG logs one line per tool call (default INFO)",
    )
    add_background_options(serve)
    serve.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    # Start-up builds ~180,000 objects that live as long as the process (fastmcp's and
    # the MCP SDK's pydantic models); collecting cycles among them while they are built
    # cost 0.1-0.2 s of every start. ``daemon`` turns the collector back on once serving.
    gc.disable()
    from indexer.malloc_arenas import limit_arenas

    limit_arenas()  # (before the server's threads start)
    from indexer.cli import configure_logging
    from indexer.cpu_review import start_review
    from indexer.daemon import run
    from indexer.index.late_check import FoundDamaged
    from indexer.one_cpu import pin_to_one_cpu, unpin
    from indexer.settings import Settings, unknown_settings

    try:
        settings = Settings.resolve(vars(args), os.environ)
    except ValueError as err:
        raise ConfigError(words_of(err)) from None
    configure_logging(settings.log_level)
    for name, meant in unknown_settings(os.environ):
        logging.getLogger("indexer").warning(
            "%s is not a setting of the indexer (ignored)%s",
            name,
            f": did you mean {meant}?" if meant else " (deploy/env.example lists them)",
        )
    if settings.one_cpu:  # (before the server's threads start: they inherit it)
        pin_to_one_cpu()
        start_review()
    try:
        run(settings)
    except FoundDamaged as err:  # (stopped, the lock given up: the next start rebuilds)
        if err.marked and err.stop_asked:  # (a SIGTERM in between was lost: it served on)
            logging.getLogger("indexer").warning(
                "%s: stopped as asked; the next start rebuilds it from the vaults", err.damage
            )
            return 0
        if err.marked:  # (else that start would find the same damage: exit 1, in words)
            logging.getLogger("indexer").warning(
                "%s: starting again to rebuild it from the vaults", err.damage
            )
            unpin()  # (else the start again finds one CPU allowed, and pins nothing)
            start_again()  # (the same process id: a supervisor sees no exit)
        raise  # (could not: exit 1, and the next start rebuilds)
    # Served and closed: what is left is the interpreter's finalization, whose collections
    # walked every object the start built (0.25-0.35 s of each stop, a third of a stop's
    # time). Frozen objects are not walked; atexit handlers and thread joins still run.
    gc.freeze()
    return 0
