"""The Vault MCP server: tools, prompts and resources registered on a FastMCP instance.

``create_server`` is the only place tools are registered. Errors leave through one
boundary, ``ToolBoundary``: a ``VaultError`` becomes a tool error whose text starts with
its SPEC code, bad arguments become ``invalid_argument``, and anything unexpected is
logged with its traceback and masked as ``internal`` (no host paths in messages).
"""

from __future__ import annotations

import functools
import hmac
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.exceptions import ValidationError as FastMCPValidationError
from fastmcp.server.auth import AccessToken, TokenVerifier
from fastmcp.server.middleware import Middleware, MiddlewareContext
from pydantic import Field

import indexer
from indexer.settings import Settings
from indexer.vault import Vault
from shared.errors import VaultError

if TYPE_CHECKING:
    from indexer.index import NoteIndex

log = logging.getLogger("indexer.tools")

Lang = Annotated[str, Field(description="vault id, e.g. 'en', 'ja', 'zh-Hans'")]
RelPath = Annotated[str, Field(description="POSIX path relative to the vault root")]
INSTRUCTIONS = """Markdown vaults of long-term memory, one per lang. Paths are relative to
the vault root (items/<slug>.md for knowledge, events/YYYY/MM/DD.md for events). Search or
grep before writing; pass the etag you read as if_match when you write. Errors start with
a code: invalid_lang, forbidden_path, not_found, conflict, invalid_frontmatter, too_large,
invalid_argument. Load the prompt `vault_spec` for the vault's conventions."""


def refusals(fn: Callable[..., dict]) -> Callable[..., dict]:
    """Run a tool body: VaultError -> its coded message; anything unexpected -> masked."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> dict:
        try:
            return fn(*args, **kwargs)
        except VaultError as err:
            raise ToolError(str(err)) from None
        except FileNotFoundError:
            raise ToolError("not_found: the file disappeared while the call ran") from None
        except Exception:
            log.exception("tool %s failed", fn.__name__)
            raise ToolError("internal: the indexer failed on this call (see its log)") from None

    return wrapper


def inline(fn: Callable[..., dict]) -> Callable[..., Any]:
    """Run a quick tool body on the event loop itself, skipping the thread-pool hop.

    Only for calls bounded by one small file (``read``/``stat`` of at most
    ``max_file_bytes``): the hop and the GIL hand-off back cost more than the work.
    """
    checked = refusals(fn)

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> dict:
        return checked(*args, **kwargs)

    return wrapper


class ToolBoundary(Middleware):
    """Maps bad arguments to invalid_argument; logs one line per call (tool, lang, path, ms,
    outcome)."""

    async def on_call_tool(self, context: MiddlewareContext, call_next: Any) -> Any:
        started = time.perf_counter()
        name = context.message.name
        args = context.message.arguments or {}
        outcome = "ok"
        try:
            return await call_next(context)
        except FastMCPValidationError as err:
            outcome = "invalid_argument"
            raise ToolError(f"invalid_argument: {_validation_summary(err)}") from None
        except ToolError as err:
            outcome = str(err).split(":", 1)[0]
            raise
        finally:
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "tool=%s lang=%s path=%s ms=%.2f outcome=%s",
                    name,
                    args.get("lang", "-"),
                    args.get("path", "-"),
                    (time.perf_counter() - started) * 1e3,
                    outcome,
                )


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


def create_server(settings: Settings, vault: Vault, index: NoteIndex | None = None) -> FastMCP:
    """Build the FastMCP server with every tool, prompt and resource of the SPEC."""
    mcp = FastMCP(
        "vault-memory",
        instructions=INSTRUCTIONS,
        version=indexer.__version__,
        auth=SharedTokenVerifier(settings.token) if settings.token else None,
        mask_error_details=True,
        strict_input_validation=True,
        middleware=[ToolBoundary()],
    )
    if index is not None:
        vault.listeners.append(index.note_changed)
        vault.grep_planner = index.grep_plan
    _register_file_tools(mcp, vault)
    _register_index_tools(mcp, settings, vault, index)
    _register_texts(mcp, settings.prompts_dir)
    if settings.echo_tool:

        @mcp.tool(description="Returns its input (benchmark floor).")
        @inline
        def echo(text: str) -> dict:
            return {"text": text}

    return mcp


def _register_file_tools(mcp: FastMCP, vault: Vault) -> None:
    @mcp.tool(annotations={"readOnlyHint": True})
    @inline
    def read(lang: Lang, path: RelPath, offset: int = 0, limit: int | None = None) -> dict:
        """Read a file. offset/limit select lines. Returns content, etag, size, mtime."""
        return vault.read(lang, path, offset, limit)

    @mcp.tool(annotations={"destructiveHint": True})
    @refusals
    def write(
        lang: Lang,
        path: RelPath,
        content: str,
        encoding: Annotated[str, Field(description="'utf-8' or 'base64' (images)")] = "utf-8",
        if_match: Annotated[
            str | None, Field(description="etag you read; '' = must not exist yet")
        ] = None,
    ) -> dict:
        """Write a whole .md note (frontmatter normalized) or an image in *.assets/ (base64)."""
        return vault.write(lang, path, content, encoding, if_match)

    @mcp.tool(name="stat", annotations={"readOnlyHint": True})
    @inline
    def stat_(lang: Lang, path: RelPath) -> dict:
        """Whether a path exists, its type ('file'/'dir'), size, mtime and etag."""
        return vault.stat(lang, path)

    @mcp.tool
    @refusals
    def append(lang: Lang, path: RelPath, content: str, create: bool = True) -> dict:
        """Append text at the end of a .md file without rewriting it (serialized per file).

        A note created by an append whose text starts with a --- block is normalized like
        a write (invalid frontmatter refused)."""
        return vault.append(lang, path, content, create)

    @mcp.tool(annotations={"readOnlyHint": True})
    @refusals
    def find(
        lang: Lang,
        pattern: Annotated[str, Field(description="glob; ** spans folders")] = "**/*.md",
        path: Annotated[str, Field(description="folder to search in")] = "",
        limit: int = 200,
    ) -> dict:
        """List files whose path (below `path`) matches a glob; dot-files are skipped."""
        return vault.find(lang, pattern, path, limit)

    @mcp.tool(annotations={"readOnlyHint": True})
    @refusals
    def grep(
        lang: Lang,
        pattern: Annotated[str, Field(description="RE2 regex, or a literal with fixed=true")],
        path: Annotated[str, Field(description="folder to search in")] = "",
        glob: str = "**/*.md",
        fixed: bool = False,
        ignore_case: bool = False,
        limit: int = 100,
    ) -> dict:
        """Lines matching a pattern (linear-time regex), as {path, line, text}."""
        return vault.grep(lang, pattern, path, glob, fixed, ignore_case, limit)

    @mcp.tool(annotations={"destructiveHint": True})
    @refusals
    def delete(lang: Lang, path: RelPath) -> dict:
        """Delete a file (a note's .assets/ folder goes with it) or an empty folder."""
        return vault.delete(lang, path)


def _register_index_tools(
    mcp: FastMCP, settings: Settings, vault: Vault, index: NoteIndex | None
) -> None:
    @mcp.tool(name="status", annotations={"readOnlyHint": True})
    @refusals
    def status_() -> dict:
        """Version, workspace, notes per lang, and whether the index is ready."""
        counts = index.counts() if index is not None else vault.note_counts()
        return {
            "version": indexer.__version__,
            "workspace": str(settings.workspace.root),
            "langs": counts,
            "index_ready": index.ready if index is not None else False,
            "search": index is not None,
            "pid": os.getpid(),
        }

    if index is None:
        return

    @mcp.tool(annotations={"readOnlyHint": True})
    @refusals
    def search(
        lang: Lang,
        query: Annotated[str, Field(description='words (all must match) and "phrases"')],
        limit: int = 10,
        type: str | None = None,
        tags: list[str] | None = None,
        path: Annotated[str, Field(description="folder prefix")] = "",
    ) -> dict:
        """Ranked full-text search (BM25, CJK aware) with highlighted snippets."""
        return index.search(lang, query, limit, type, tags, path)


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
    for name, uri, file, kind in texts:
        title = _first_heading(file) or name
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
