"""``indexer``: the command line. A thin layer: parse flags, build Settings, call the library.

Errors leave as one line on stderr and a non-zero exit code.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Sequence

# Libraries must not phone home or print banners from a daemon (set before they import).
QUIET_LIBRARIES = {
    "FASTMCP_SHOW_SERVER_BANNER": "false",
    "FASTMCP_CHECK_FOR_UPDATES": "off",
    "FASTMCP_TELEMETRY_MODE": "off",
    "FASTMCP_ENABLE_RICH_TRACEBACKS": "false",
    "FASTMCP_LOG_LEVEL": "ERROR",
    "OTEL_SDK_DISABLED": "true",
    "DO_NOT_TRACK": "1",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="indexer", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the Vault MCP tools for a workspace")
    serve.add_argument("--workspace", help="workspace folder W (env INDEXER_WORKSPACE)")
    serve.add_argument("--host", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="TCP port (default 0: a free one)")
    serve.add_argument(
        "--token",
        help="require this bearer token (shows in the process list: prefer INDEXER_MCP_TOKEN)",
    )
    serve.add_argument("--log-level", help="DEBUG logs one line per tool call (default INFO)")
    serve.set_defaults(func=cmd_serve)
    _register_module_commands(commands)
    return parser


def _register_module_commands(commands: argparse._SubParsersAction) -> None:
    """Subcommands that live beside the modules they drive (index, client snippets, page)."""
    from indexer import cli_open, index_cli, snippets

    index_cli.register(commands)
    snippets.register(commands)
    cli_open.register(commands)


def configure_logging(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("indexer")
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    # fastmcp logs every refused call at ERROR; our ToolBoundary logs outcomes already.
    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)


def cmd_serve(args: argparse.Namespace) -> int:
    from indexer.app import run
    from indexer.settings import Settings

    settings = Settings.resolve(vars(args), os.environ)
    configure_logging(settings.log_level)
    return run(settings)


def main(argv: Sequence[str] | None = None) -> int:
    for key, value in QUIET_LIBRARIES.items():
        os.environ.setdefault(key, value)
    # watchdog warns (harmlessly) when a folder tree appears faster than it adds watches.
    warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except ValueError as err:
        print(f"indexer: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
