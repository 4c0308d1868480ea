"""``indexer``: the command line. Each command parses its flags and calls the library;
errors end here, as one line on stderr and an exit code (``exit_code``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
import warnings
from collections.abc import Sequence

import indexer
from shared.cli_usage import (
    EXIT_INTERRUPTED,
    Parser,
    refuse_options_before_command,
    said_of_os_error,
    say_refusal,
    standard_streams,
    stdout_closed,
)
from shared.errors import (
    AlreadyRunningError,
    ConfigError,
    ForbiddenPathError,
    InvalidArgumentError,
    InvalidLangError,
    NotFoundError,
    OperationalError,
    SystemRefusedError,
    VaultError,
)
from shared.terminal_text import shows_any_text
from shared.utf8_mode import in_utf8_mode
from shared.workspace import (
    Workspace,
    not_a_folder,
    shell_word,
    spelled_otherwise,
    workspace_path,
)

DESCRIPTION = """\
Run and inspect the vault-memory indexer: the daemon that owns a workspace of Markdown
vaults, keeps their search index current and serves them to AI agents over MCP.

Start with `indexer serve --workspace W`; then `indexer config-snippet` prints the
configuration for Claude Desktop, Cursor and other MCP clients.
"""
EPILOG = """\
exit codes: 0 done, 1 failed, 2 bad usage or settings, 3 another indexer already
serves the workspace. Every setting (the README's settings table; deploy/env.example
in the source) can also be set in the environment: a flag wins over the environment.
"""
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_ALREADY_RUNNING = 3

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


def workspace_options() -> argparse.ArgumentParser:
    """The ``--workspace`` flag every command shares (a parent parser)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument(
        "--workspace",
        metavar="W",
        help="the workspace folder (default: $INDEXER_WORKSPACE)",
    )
    return parent


def add_background_options(parser: argparse.ArgumentParser) -> None:
    """The background model and maintenance flags (``serve`` and ``maintain``)."""
    add_model_options(parser)
    tasks = parser.add_argument_group(
        "maintenance (off by default: USER.md and PROJECT.md distilled from events/)"
    )
    for name, output in (("user-profile", "USER.md"), ("project-review", "PROJECT.md")):
        tasks.add_argument(
            f"--maintenance-{name}",
            action="store_const",
            const="1",
            help=f"enable the {name.replace('-', '_')} task ({output})",
        )
    tasks.add_argument(
        "--maintenance-min-interval-hours",
        metavar="H",  # (checked by Settings, as its variable is: ASCII digits, one line)
        help="hours between two successful runs of a task (default 24)",
    )


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """The background model's flags (``serve``, and commands that run a job at once)."""
    model = parser.add_argument_group(
        "background model (optional; without one, folder summaries take their fallback"
        " and maintenance its deterministic path: tagged entries added, a dated line each)"
    )
    model.add_argument("--llm-model", help="chat model for summaries and maintenance")
    model.add_argument("--llm-base-url", help="OpenAI-compatible API base URL of that model")
    model.add_argument(
        "--llm-api-key",
        help="API key of that endpoint (shows in the process list: prefer INDEXER_LLM_API_KEY)",
    )


def resolve_workspace(args: argparse.Namespace, *, existing: bool = False) -> Workspace:
    """The workspace of ``--workspace`` or ``INDEXER_WORKSPACE``; ``ConfigError`` if none,
    or, for a command that only works on one (``existing``), if there is no folder there:
    a mistyped path got a fresh ``.indexer/`` instead of an error."""
    root = getattr(args, "workspace", None) or os.environ.get("INDEXER_WORKSPACE", "")
    if not root:
        raise ConfigError("no workspace: pass --workspace W or set INDEXER_WORKSPACE")
    workspace = Workspace(workspace_path(root))
    if (why := not_a_folder(workspace.root)) is not None:
        raise ConfigError(why)
    if existing and not workspace.root.is_dir():
        if (other := spelled_otherwise(workspace.root)) is not None:
            raise ConfigError(
                f"there is no workspace at {workspace.root}, but there is {other}: the same"
                " name in another Unicode form (an accent as its own code point, or not);"
                f" use --workspace {shell_word(other)}"
            )
        raise ConfigError(
            f"there is no workspace at {workspace.root} (a typo?); "
            f"`indexer serve --workspace {shell_word(workspace.root)}` makes one"
        )
    return workspace


class NoSuchVaultError(NotFoundError):
    """``--lang`` names a vault the workspace does not have: bad usage (exit 2), as a lang
    that is no vault id is; worded ``not_found`` as the REST API says it."""


def named_vault(workspace: Workspace, lang: str) -> str:
    """The vault ``--lang`` names (``summarize``, ``maintain``), checked as an id and
    there (a vault served as another's is not); ``NoSuchVaultError`` naming those there."""
    from shared.langs import check_lang

    lang = check_lang(lang)
    there = workspace.langs()
    if lang not in there:
        named = ", ".join(there) or "none"
        raise NoSuchVaultError(
            f"there is no vault {lang!r} in {workspace.root} (its vaults: {named})"
        )
    return lang


# The module of each command (its ``register`` adds the command's parser), in the order
# ``indexer --help`` lists them. ``main`` builds the parser of the command it is given
# alone: the others' parsers and modules cost 10-15 ms of a server's start.
COMMAND_MODULES = {
    "serve": "serve",
    "reindex": "index",
    "status": "index",
    "search": "index",
    "history": "history",
    "summarize": "summarize",
    "maintain": "maintain",
    "config-snippet": "client_config",
    "open": "open",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser, or only that of ``command`` when it names one (what the
    parser answers for it is the same)."""
    parser = Parser(
        prog="indexer",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"indexer {indexer.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    common = workspace_options()
    modules = dict.fromkeys(COMMAND_MODULES.values())
    if command in COMMAND_MODULES:
        modules = {COMMAND_MODULES[command]: None}
    for name in modules:
        importlib.import_module(f"indexer.cli.{name}").register(commands, common)
    return parser


def exit_code(err: BaseException) -> int:
    """The one map from errors to exit codes: a path the vault refuses is one typed on
    the command line (``history PATH``, ``search --path``), bad usage as a bad argument;
    one the system refuses (permission, read-only) is a failure."""
    if isinstance(err, AlreadyRunningError):
        return EXIT_ALREADY_RUNNING
    if isinstance(err, ForbiddenPathError) and not isinstance(err, SystemRefusedError):
        return EXIT_USAGE
    if isinstance(err, ConfigError | InvalidArgumentError | InvalidLangError | ValueError):
        return EXIT_USAGE
    if isinstance(err, NoSuchVaultError):
        return EXIT_USAGE
    return EXIT_FAILED


def configure_logging(level: str) -> None:
    from indexer import logs

    logs.configure(level)
    # fastmcp logs every refused call at ERROR; our ToolBoundary logs outcomes already.
    logging.getLogger("fastmcp").setLevel(logging.CRITICAL)


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # (the process's own command line)
        standard_streams()  # (before any file is opened: none takes 0, 1 or 2)
        in_utf8_mode()  # first: a locale that is not UTF-8 starts it again in UTF-8 mode
    for key, value in QUIET_LIBRARIES.items():
        os.environ.setdefault(key, value)
    # watchdog warns (harmlessly) when a folder tree appears faster than it adds watches.
    warnings.filterwarnings("ignore", message="Callback with id", category=RuntimeWarning)
    shows_any_text(sys.stdout)  # (a terminal that is not UTF-8: escapes, not a crash)
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(argv[0] if argv else None)
    refuse_options_before_command(parser, argv)
    if argv and argv[0] == "search":
        from indexer.cli.index import minus_words_as_query  # (imported by build_parser)

        argv = minus_words_as_query(argv)
    args = parser.parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, where a reader gone is caught, not at the exit
        return code
    except BrokenPipeError:
        return stdout_closed()
    except KeyboardInterrupt:  # (a long summarize or maintain: a traceback, status -2)
        print(f"indexer {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (VaultError, ValueError, OSError) as err:
        # Operational errors say what to do; a refusal keeps its code (as over MCP).
        if isinstance(err, OperationalError):
            text = err.message
        elif isinstance(err, OSError):
            text = said_of_os_error(err)
        else:
            text = str(err)
        say_refusal(f"indexer {args.command}: {text}")
        return exit_code(err)
