"""``indexer serve``: run the daemon in the foreground until SIGTERM or Ctrl-C."""

from __future__ import annotations

import argparse
import os
from typing import Any

from shared.errors import ConfigError


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
    serve.add_argument("--port", type=int, help="TCP port (default 0: a free one)")
    serve.add_argument(
        "--token",
        help="require this bearer token of every client (it shows in the process list: "
        "prefer INDEXER_MCP_TOKEN)",
    )
    serve.add_argument(
        "--log-level",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        type=str.upper,
        help="DEBUG logs one line per tool call (default INFO)",
    )
    add_model_flags(serve)
    serve.set_defaults(func=cmd_serve)


def add_model_flags(parser: argparse.ArgumentParser) -> None:
    """The background model's flags (``serve``, and commands that run a job at once)."""
    model = parser.add_argument_group(
        "background model (optional; without one every job takes its deterministic path)"
    )
    model.add_argument("--llm-model", help="chat model for summaries and maintenance")
    model.add_argument("--llm-base-url", help="OpenAI-compatible API base URL of that model")
    model.add_argument(
        "--llm-api-key",
        help="API key of that endpoint (shows in the process list: prefer INDEXER_LLM_API_KEY)",
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from indexer.cli import configure_logging
    from indexer.daemon import run
    from indexer.settings import Settings

    try:
        settings = Settings.resolve(vars(args), os.environ)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    configure_logging(settings.log_level)
    run(settings)
    return 0
