"""The Vault MCP server: tools, prompts and resources registered on a FastMCP instance.

``create_server`` only registers: every tool goes through ``Registrar.tool``, which
applies the one error mapping (``refusals``: a ``VaultError`` becomes a tool error
whose text starts with its SPEC code, anything unexpected is logged and masked as
``internal``, with no host paths), and ``ToolBoundary`` maps bad arguments to
``invalid_argument`` and logs one line per call. Wiring the objects together (index
listeners, the grep planner) is the daemon's job, so building a server twice changes
nothing.
"""

from __future__ import annotations

import functools
import hmac
import inspect
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastmcp import FastMCP
from fastmcp.exceptions import NotFoundError, ToolError
from fastmcp.exceptions import ValidationError as FastMCPValidationError
from fastmcp.server.auth import AccessToken, TokenVerifier
from fastmcp.server.middleware import Middleware, MiddlewareContext

import indexer
from indexer.core import Core
from indexer.vault import oserrors
from indexer.web.loop_calls import on_loop_unless_waiting
from indexer.web.mcp_text import not_text_refusal
from indexer.web.reply_size import bounded
from indexer.web.tools import files, history, index, recall, summaries
from shared.errors import MAX_WHOLE_NUMBER, VaultError

log = logging.getLogger("indexer.tools")

INTERNAL = "internal: the indexer failed on this call (see its log)"
INSTRUCTIONS = """Markdown vaults of long-term memory, one per lang. Paths are relative to
the vault root (items/<slug>.md for knowledge, events/YYYY/MM/DD.md for events). Search or
grep before writing; pass the etag you read as if_match when you write, and a short
reason. Every change is kept in history (history, diff, restore). Errors start with
a code: invalid_lang, forbidden_path, not_found, conflict, invalid_frontmatter, too_large,
invalid_argument. Load the prompt `vault_spec` for the vault's conventions."""


def refusals(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a tool body (sync or async): VaultError -> its coded message; a system error
    -> its plain words (``oserrors``); anything unexpected -> masked."""
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def waited(*args: Any, **kwargs: Any) -> dict:
            try:
                return await fn(*args, **kwargs)  # type: ignore[no-any-return]
            except Exception as err:
                raise _refusal(_called(fn.__name__, kwargs), err) from None

        return waited

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> dict:
        try:
            return fn(*args, **kwargs)  # type: ignore[no-any-return]
        except Exception as err:
            raise _refusal(_called(fn.__name__, kwargs), err) from None

    return wrapper


def _called(name: str, args: dict[str, Any]) -> str:
    """A tool call as a log line names it: the tool and its vault and path (a warning
    "permission denied" said which tool only)."""
    where = "/".join(_shown(args[key]) for key in ("lang", "path") if key in args)
    return f"{name} {where}" if where else name


def _refusal(call: str, err: Exception) -> ToolError:
    """The tool error a client sees for ``err`` (logged when it was not a refusal)."""
    if isinstance(err, VaultError):
        if err.code == "internal":  # the server's own failure: the operator must hear of it
            log.error("tool %s failed: %s", call, err)
        return ToolError(str(err))
    if isinstance(err, FileNotFoundError):
        return ToolError("not_found: the file disappeared while the call ran")
    described = oserrors.describe(err) if isinstance(err, OSError) else None
    if described is None:
        log.error("tool %s failed", call, exc_info=err)
        return ToolError(INTERNAL)
    log.warning("tool %s: %s (%s)", call, described.message, getattr(err, "strerror", ""))
    return ToolError(str(described))


def on_loop(fn: Callable[..., dict]) -> Callable[..., Any]:
    """Run a quick tool body on the event loop itself, skipping the thread-pool hop.

    Only for read-only calls that are quick as a rule (``read``/``stat`` of one small
    file, ``search``): the hop and the GIL hand-off back cost more than the work. One
    that would wait (a lease, a large file to hash, appends to index first) or takes
    longer than ``no_wait.LOOP_SECONDS`` goes to a thread (``on_loop_unless_waiting``).
    """

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> dict:
        return await on_loop_unless_waiting(fn, *args, **kwargs)

    return wrapper


class Registrar:
    """Registers tools on one server, each wrapped in the one error mapping."""

    def __init__(self, mcp: FastMCP) -> None:
        self.mcp = mcp

    def tool(
        self, *, name: str | None = None, quick: bool = False, read_only: bool = False, **kw: Any
    ) -> Callable[[Callable[..., Any]], Any]:
        """``@tools.tool(...)``: ``quick`` runs on the event loop (see ``on_loop``)."""

        def register(fn: Callable[..., Any]) -> Any:
            body = refusals(on_loop(fn) if quick else fn)
            body = bounded(body) if read_only else body  # (its answer fits a client)
            description = kw.pop("description", None) or inspect.getdoc(fn)
            body.__doc__ = None  # else fastmcp imports griffe (0.2 s of start-up) to parse it
            annotations = {"readOnlyHint": True} if read_only else kw.pop("annotations", None)
            register_tool = self.mcp.tool(
                name=name, description=description, annotations=annotations, **kw
            )
            return register_tool(body)

        return register


class ToolBoundary(Middleware):
    """Maps bad arguments and an unknown tool's name to invalid_argument; logs one line per
    call (tool, lang, path, ms, outcome)."""

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        started = time.perf_counter()
        name = context.message.name
        args = context.message.arguments or {}
        outcome = "ok"
        try:
            not_text = not_text_refusal(args)  # (over HTTP: ``mcp_text``, before parsing)
            if not_text is not None:
                raise ToolError(not_text)
            huge = first_bad(args, _huge)
            if huge is not None:
                raise ToolError(
                    f"invalid_argument: {huge} is a number out of range (whole numbers go"
                    f" from -{MAX_WHOLE_NUMBER} to {MAX_WHOLE_NUMBER})"
                )
            return await call_next(context)
        except FastMCPValidationError as err:
            outcome = "invalid_argument"
            raise ToolError(f"invalid_argument: {_validation_summary(err)}") from None
        except NotFoundError:  # (the library's words were "Unknown tool: 'x'", no code)
            outcome = "invalid_argument"
            raise ToolError(
                f"invalid_argument: there is no tool named {_shown(name)[:100]!r}"
                " (tools/list names the tools)"
            ) from None
        except ToolError as err:
            outcome = str(err).split(":", 1)[0]
            raise
        finally:
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "tool=%s lang=%s path=%s ms=%.2f outcome=%s",
                    name,
                    _shown(args.get("lang", "-")),
                    _shown(args.get("path", "-")),
                    (time.perf_counter() - started) * 1e3,
                    outcome,
                )


def first_bad(
    value: object, bad: Callable[[object], bool], name: str = "an argument"
) -> str | None:
    """The name of the first value in ``value`` (arguments, nested) that is ``bad``, or
    None: checked before any tool runs, so each tool need not."""
    if bad(value):
        return name
    if isinstance(value, dict):
        for key, item in value.items():
            found = first_bad(key, bad, name) or first_bad(item, bad, f"the argument {key!r}")
            if found is not None:
                return found if name == "an argument" else name
    elif isinstance(value, list | tuple):
        for item in value:
            found = first_bad(item, bad, name)
            if found is not None:
                return found
    return None


def _huge(value: object) -> bool:
    """A whole number SQLite cannot hold (a version, offset or limit would overflow)."""
    return isinstance(value, int) and not -MAX_WHOLE_NUMBER <= value <= MAX_WHOLE_NUMBER


def _shown(value: object) -> str:
    """A value as a log line can carry it, whatever it holds."""
    text = value if isinstance(value, str) else repr(value)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")[:300]


def _validation_summary(err: Exception) -> str:
    """The argument names and problems from a validation error, in one line."""
    lines = [line.strip() for line in str(err).splitlines()[1:]]
    useful = [line.split(" [type=")[0] for line in lines if line and "errors.pydantic" not in line]
    return "bad arguments: " + "; ".join(useful)[:300] if useful else "bad arguments"


class SharedTokenVerifier(TokenVerifier):
    """Accepts exactly one bearer token (compared in constant time): local defence in depth."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode("utf-8"), self._token):
            return AccessToken(token=token, client_id="local", scopes=[])
        return None


def create_server(core: Core) -> FastMCP:
    """Build the FastMCP server with every tool, prompt and resource of the SPEC."""
    settings = core.settings
    mcp = FastMCP(
        "vault-memory",
        instructions=INSTRUCTIONS,
        version=indexer.__version__,
        auth=SharedTokenVerifier(settings.token) if settings.token else None,
        mask_error_details=True,
        strict_input_validation=True,
        middleware=[ToolBoundary()],
    )
    tools = Registrar(mcp)
    for register in (
        files.register,
        history.register,
        index.register,
        recall.register,
        summaries.register,
    ):
        register(tools, core)
    _register_texts(mcp, settings.prompts_dir)
    if settings.echo_tool:

        @tools.tool(quick=True, description="Returns its input (benchmark floor).")
        def echo(text: str) -> dict:
            return {"text": text}

    return mcp


def _register_texts(mcp: FastMCP, prompts_dir: Path) -> None:
    """Each ``prompts/<name>.md`` as prompt ``<name>`` and resource ``vault://prompts/<name>``;
    each ``prompts/skills/<skill>/SKILL.md`` as resource ``vault://skills/<skill>``."""
    texts: list[tuple[str, str, Path, str]] = [
        (p.stem, f"vault://prompts/{p.stem}", p, "prompt") for p in sorted(prompts_dir.glob("*.md"))
    ]
    texts += [
        (p.parent.name, f"vault://skills/{p.parent.name}", p, "skill")
        for p in sorted(prompts_dir.glob("skills/*/SKILL.md"))
    ]
    if not texts:  # a folder chosen with INDEXER_PROMPTS_DIR, maybe on purpose
        log.warning("no prompt texts (*.md) in %s: none are served", prompts_dir)
    for name, uri, file, kind in texts:
        try:  # a folder named x.md, a link to nothing, a text not UTF-8: said, skipped
            title = _first_heading(file) or name
        except (OSError, UnicodeDecodeError) as err:
            log.warning("prompt text %s cannot be read, not served: %s", file, err)
            continue
        load = _loader(file)
        mcp.resource(uri, name=name, description=title, mime_type="text/markdown")(load)
        if kind == "prompt":
            mcp.prompt(name=name, description=title)(load)


def _loader(file: Path) -> Any:
    """A no-argument function returning the file's current text (edits show at once)."""

    def load() -> str:
        return file.read_text(encoding="utf-8")

    return load


def _first_heading(file: Path) -> str:
    for line in file.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return ""
