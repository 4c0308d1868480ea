"""The REST API at ``/api/v1``: the MCP tools' behaviour over plain HTTP.

Each route reads its inputs, calls the same core object the tool calls (``Vault``,
``NoteIndex``, and history, summaries and recall once they exist) and answers the
tool's result as JSON; no rule lives here. ETags are the tools' etags in quotes:
``If-Match`` and ``If-None-Match: *`` become ``if_match`` on every route that changes a
file (write, append, delete, move, restore); a GET with a matching
``If-None-Match`` answers 304. A feature the core lacks answers 404 ``not_found``
saying so. Every write route first passes ``auth.csrf_refusal``; credentials and
security headers are ``auth.WebGuard``'s job, before routing.
"""

from __future__ import annotations

import base64
import functools
import mimetypes
import time
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from indexer.core import Core
from indexer.vault.sandbox import clean_relpath
from indexer.vault.unreachable import RecentWalks
from indexer.web import openapi
from indexer.web.api_jobs import job_routes
from indexer.web.auth import csrf_refusal
from indexer.web.http_errors import (
    UnsupportedMediaTypeError,
    http_exception,
    refusals,
    server_error,
)
from indexer.web.limits import body_cap
from indexer.web.loop_calls import on_loop_unless_waiting
from indexer.web.params import (
    JSON_CAP_EXTRA,
    JSON_TYPES,
    OPTIONAL_STR,
    REQUIRED,
    check_query_names,
    check_url_path,
    decode_text,
    fields,
    if_match_fails,
    is_text_type,
    json_body,
    json_object,
    media_type,
    not_modified,
    precondition,
    query_bool,
    query_int,
    query_optional_int,
    query_str,
    query_version,
    quote_etag,
    read_body,
    version_value,
    write_precondition,
)
from indexer.web.render import NoteRenderer
from indexer.web.vault_names import vault_lookup
from shared.errors import ConflictError, InvalidArgumentError, NotFoundError
from shared.langs import check_lang

PREFIX = "/api/v1"
VERSION = (int, str)
HEAD_BYTES = 16 * 1024  # a file's beginning, by default
SUMMARY_FORMATS = ("json", "html")
MAX_LISTED = 10_000  # a folder's own files listed, by default (find's most)
# /status walks each vault for what no tool can reach for at most this long (10,000
# files: 40-100 ms), then says ``partial``; the CLI's status gives each vault 2 s
UNREACHABLE_WALK = 1.0


def _feature(obj: object, method: str, what: str) -> Callable[..., Any]:
    fn = getattr(obj, method, None) if obj is not None else None
    if fn is None:
        raise NotFoundError(f"{what} is not available in this indexer (feature absent)")
    return fn  # type: ignore[no-any-return]


def features(core: Core) -> dict[str, bool]:
    """What this indexer can do beyond files (the page hides the views it cannot)."""
    return {
        "search": core.index is not None,
        "history": hasattr(core.vault, "history"),
        "summaries": core.summaries is not None,
        "recall": core.recall is not None,
    }


def _tool_json(result: dict, etag: str | None = None, status: int = 200) -> JSONResponse:
    headers = {"ETag": quote_etag(etag)} if etag else None
    return JSONResponse(result, status_code=status, headers=headers)


def api_routes(core: Core, login_link: Callable[..., Any]) -> list[Route]:
    """Every route of the API (relative to ``/api/v1``); ``openapi.json`` describes them."""
    vault = core.vault
    renderer = NoteRenderer(PREFIX, vault_lookup(core))
    cap = vault.max_file_bytes
    json_cap = body_cap(cap)  # a note JSON-escaped, or an image in base64
    unreachable = RecentWalks(core.settings.workspace, UNREACHABLE_WALK)

    def lang_path(request: Request) -> tuple[str, str]:
        """The route's vault and path; a vault id that is none is said first (400), not
        after the headers' preconditions (a weak If-Match answered 412). (Its URL's
        escapes were checked before the route ran: ``_known_queries``.)"""
        return check_lang(request.path_params["lang"]), request.path_params.get("path", "")

    async def read_note(request: Request, offset: int = 0, limit: int | None = None) -> dict:
        """The tool's read, refused (412) when ``If-Match`` names another text."""
        lang, path = lang_path(request)
        version = query_version(request, "version")
        result = await on_loop_unless_waiting(vault.read, lang, path, offset, limit, version)
        if if_match_fails(request, result["etag"]):
            raise ConflictError(
                f"{result['path']} has the etag {quote_etag(result['etag'])}, none If-Match"
                " names: it changed since it was read"
            )
        return result

    async def status(request: Request) -> Response:
        result = await run_in_threadpool(core.status)
        result["features"] = features(core)
        if core.index is not None:
            result["index"] = await run_in_threadpool(core.index.info)
        # the files another program named as the vault refuses: listed nowhere else
        result["unreachable"] = await run_in_threadpool(unreachable.report)
        return JSONResponse(result)

    async def openapi_json(request: Request) -> Response:
        return JSONResponse(openapi.document())

    async def find(request: Request) -> Response:
        lang = request.path_params["lang"]
        pattern = query_str(request, "pattern") or "**/*.md"
        path = query_str(request, "path", "") or ""
        limit = query_int(request, "limit", 200)
        dirs = query_bool(request, "dirs", False)
        page = {"after": query_str(request, "after"), "paged": True}  # (``vault.cursor``)
        return _tool_json(
            await core.scans.run(vault.find, lang, pattern, path, limit, dirs, **page)
        )

    async def folder(request: Request) -> Response:
        """A folder for the page in one call: one walk (``Vault.list_folder``), and its
        subfolders' abstracts when the core has summaries (None: none made yet)."""
        lang = request.path_params["lang"]
        path = query_str(request, "path", "") or ""
        limit = query_int(request, "limit", MAX_LISTED)
        after = query_str(request, "after")
        result = await core.scans.run(vault.list_folder, lang, path, limit, after)
        # the entries here and below each subfolder that no tool can reach (the status
        # names them; the folder said "0 notes inside" and "No notes here.")
        own, below = await run_in_threadpool(unreachable.in_folder, lang, result["path"])
        result["unreachable"] = own
        for item in result["folders"]:
            item["unreachable"] = below.get(item["path"], 0)
        if core.summaries is not None:
            folders = [item["path"] for item in result["folders"]]
            found = await run_in_threadpool(core.summaries.abstracts, lang, folders)
            for item in result["folders"]:
                item["abstract"] = found.get(item["path"])
        return _tool_json(result)

    async def read(request: Request) -> Response:
        offset = query_int(request, "offset", 0)
        result = await read_note(request, offset, query_optional_int(request, "limit"))
        if not_modified(request, result["etag"]):
            return Response(status_code=304, headers={"ETag": quote_etag(result["etag"])})
        return _tool_json(result, result["etag"])

    async def write(request: Request) -> Response:
        lang, path = lang_path(request)
        if_match = write_precondition(request)
        kind = media_type(request)
        if kind in JSON_TYPES:
            spec = {"content": (str, REQUIRED), "encoding": (str, "utf-8")}
            spec |= {"if_match": OPTIONAL_STR, "reason": OPTIONAL_STR}
            body = _write_body(await read_body(request, json_cap), spec)
            if_match = precondition(request, body["if_match"])
            content, encoding, reason = body["content"], body["encoding"], body["reason"]
        elif is_text_type(kind):
            content = decode_text(await read_body(request, cap))
            encoding, reason = "utf-8", query_str(request, "reason")
        else:
            raise UnsupportedMediaTypeError(
                "send the file as a text type (text/markdown, text/plain...) or a JSON object"
            )
        result = await run_in_threadpool(
            functools.partial(vault.write, lang, path, content, encoding, if_match, reason)
        )
        return _tool_json(result, result["etag"], 201 if result["created"] else 200)

    async def delete(request: Request) -> Response:
        lang, path = lang_path(request)
        reason = query_str(request, "reason")
        call = functools.partial(
            vault.delete, lang, path, reason, if_match=write_precondition(request)
        )
        return _tool_json(await run_in_threadpool(call))

    async def stat(request: Request) -> Response:
        lang, path = lang_path(request)
        return _tool_json(await on_loop_unless_waiting(vault.stat, lang, path))

    async def head(request: Request) -> Response:
        """A file's beginning, whatever its size (the page shows what a file too large
        to read begins with)."""
        lang, path = lang_path(request)
        max_bytes = query_int(request, "bytes", HEAD_BYTES)
        return _tool_json(await on_loop_unless_waiting(vault.head, lang, path, max_bytes))

    async def raw(request: Request) -> Response:
        """A file's bytes with its own type (images for the rendered page)."""
        result = await read_note(request)
        headers = {"ETag": quote_etag(result["etag"]), "Cache-Control": "no-cache"}
        if not_modified(request, result["etag"]):
            return Response(status_code=304, headers=headers)
        if result.get("encoding") == "base64":
            data = base64.b64decode(result["content"])
        else:
            data = result["content"].encode("utf-8")
        guessed = mimetypes.guess_type(result["path"])[0] or ""
        kind = guessed if guessed.startswith("image/") else "text/plain; charset=utf-8"
        return Response(data, media_type=kind, headers=headers)

    async def render(request: Request) -> Response:
        """A note as sanitized HTML plus its frontmatter as plain properties."""
        lang = request.path_params["lang"]
        result = await read_note(request)
        if result.get("encoding") == "base64":
            raise InvalidArgumentError(f"{result['path']} is not a text note")
        rendered = await run_in_threadpool(renderer.note, lang, result["path"], result["content"])
        shown = {k: v for k, v in result.items() if k != "content"}
        return _tool_json({**shown, **rendered}, result["etag"])

    async def append(request: Request) -> Response:
        lang = request.path_params["lang"]
        spec = {"path": (str, REQUIRED), "content": (str, REQUIRED), "create": (bool, True)}
        spec |= {"if_match": OPTIONAL_STR, "reason": OPTIONAL_STR}
        body = fields(await json_body(request, json_cap), spec)
        call = functools.partial(
            vault.append,
            lang,
            body["path"],
            body["content"],
            body["create"],
            body["reason"],
            if_match=precondition(request, body["if_match"]),
        )
        result = await run_in_threadpool(call)
        return _tool_json(result, result["etag"])

    async def move(request: Request) -> Response:
        lang = request.path_params["lang"]
        spec = {"path": (str, REQUIRED), "new_path": (str, REQUIRED)}
        spec |= {"if_match": OPTIONAL_STR, "reason": OPTIONAL_STR}
        body = fields(await json_body(request, JSON_CAP_EXTRA), spec)
        call = functools.partial(
            vault.move,
            lang,
            body["path"],
            body["new_path"],
            if_match=precondition(request, body["if_match"]),
            reason=body["reason"],
        )
        return _tool_json(await run_in_threadpool(call))

    async def restore(request: Request) -> Response:
        lang = request.path_params["lang"]
        spec = {"path": (str, REQUIRED), "version": (VERSION, REQUIRED)}
        spec |= {"if_match": OPTIONAL_STR, "reason": OPTIONAL_STR}
        body = fields(await json_body(request, JSON_CAP_EXTRA), spec)
        version = version_value(body["version"])
        if version is None:
            raise InvalidArgumentError("restore needs a version from history")
        call = functools.partial(
            vault.restore,
            lang,
            body["path"],
            version,  # type: ignore[arg-type]
            if_match=precondition(request, body["if_match"]),
            reason=body["reason"],
        )
        return _tool_json(await run_in_threadpool(call))

    async def undo(request: Request) -> Response:
        """Every file a memory entry changed back to before it (tool ``undo``; the page's
        history view offers it on a version an entry wrote), all or nothing."""
        lang = request.path_params["lang"]
        spec = {"entry_id": (str, REQUIRED), "dry_run": (bool, False)}
        body = fields(await json_body(request, JSON_CAP_EXTRA), spec)
        call = functools.partial(vault.undo, lang, body["entry_id"], body["dry_run"])
        return _tool_json(await run_in_threadpool(call))

    async def recall(request: Request) -> Response:
        lang = request.path_params["lang"]
        spec = {"query": (str, REQUIRED), "budget_tokens": (int, 1500), "path": (str, "")}
        body = fields(await json_body(request, JSON_CAP_EXTRA), spec)
        fn = _feature(core.recall, "recall", "recall")
        call = functools.partial(fn, lang, body["query"], body["budget_tokens"], body["path"])
        return _tool_json(await run_in_threadpool(call))

    async def search(request: Request) -> Response:
        lang = request.path_params["lang"]
        index = core.index
        if index is None:
            raise NotFoundError("search is not available in this indexer (no index)")
        query = query_str(request, "q", "") or ""
        limit = query_int(request, "limit", 10)
        offset = query_int(request, "offset", 0)
        kind = query_str(request, "type") or None  # (type= is a string: no filter)
        tags = request.query_params.getlist("tag") or None
        path = clean_relpath(query_str(request, "path", "") or "", allow_root=True)
        core.vault.sandbox.check_case(lang)
        call = functools.partial(index.search, lang, query, limit, kind, tags, path, offset)
        return _tool_json(await run_in_threadpool(call))

    async def grep(request: Request) -> Response:
        lang = request.path_params["lang"]
        pattern = query_str(request, "pattern")
        if not pattern:
            raise InvalidArgumentError("grep needs a pattern")
        call = functools.partial(
            vault.grep,
            lang,
            pattern,
            query_str(request, "path", "") or "",
            query_str(request, "glob") or "**/*.md",
            query_bool(request, "fixed", False),
            query_bool(request, "ignore_case", False),
            query_int(request, "limit", 100),
            deadline=time.monotonic() + vault.grep_max_seconds,  # waiting counts
        )
        return _tool_json(await core.scans.run(call))

    async def history(request: Request) -> Response:
        lang, path = lang_path(request)
        limit = query_int(request, "limit", 20)
        return _tool_json(await run_in_threadpool(vault.history, lang, path, limit))

    async def diff(request: Request) -> Response:
        lang, path = lang_path(request)
        start = query_version(request, "from")
        if start is None:
            raise InvalidArgumentError("diff needs from= (a version from history)")
        end = query_version(request, "to")
        call = functools.partial(vault.diff, lang, path, start, end)  # type: ignore[arg-type]
        return _tool_json(await run_in_threadpool(call))

    async def summary(request: Request) -> Response:
        lang = request.path_params["lang"]
        path = query_str(request, "path", "") or ""
        shape = query_str(request, "format") or "json"
        if shape not in SUMMARY_FORMATS:  # (format=xml was answered as JSON)
            raise InvalidArgumentError(f"format must be json or html, not {shape[:40]!r}")
        fn = _feature(core.summaries, "summary", "directory summaries")
        result = dict(await run_in_threadpool(fn, lang, path))
        if shape == "html":
            where = f"{result.get('path') or path}/.overview.md".lstrip("/")
            overview = str(result.get("overview") or "")
            result["overview_html"] = await run_in_threadpool(renderer.html, lang, where, overview)
        return _tool_json(result)

    note = "/{lang}/notes/{path:path}"
    table: list[tuple[str, str, Callable[..., Any]]] = [
        ("GET", "/status", status),
        ("GET", "/openapi.json", openapi_json),
        ("POST", "/login-link", login_link),
        ("GET", "/{lang}/notes", find),
        ("GET", "/{lang}/folder", folder),
        ("GET", note, read),
        ("PUT", note, write),
        ("DELETE", note, delete),
        ("GET", "/{lang}/stat/{path:path}", stat),
        ("GET", "/{lang}/head/{path:path}", head),
        ("GET", "/{lang}/raw/{path:path}", raw),
        ("GET", "/{lang}/render/{path:path}", render),
        ("POST", "/{lang}/append", append),
        ("POST", "/{lang}/move", move),
        ("POST", "/{lang}/restore", restore),
        ("POST", "/{lang}/undo", undo),
        ("POST", "/{lang}/recall", recall),
        ("GET", "/{lang}/search", search),
        ("GET", "/{lang}/grep", grep),
        ("GET", "/{lang}/history/{path:path}", history),
        ("GET", "/{lang}/diff/{path:path}", diff),
        ("GET", "/{lang}/summary", summary),
        *job_routes(core, json_cap),
    ]
    routes: dict[str, Route] = {}
    by_path: dict[str, dict[str, Callable[..., Any]]] = {}
    for method, path, endpoint in table:
        known = _known_queries(endpoint, openapi.query_names(path, method))
        by_path.setdefault(path, {})[method] = _csrf_checked(refusals(known))
    for path, methods in by_path.items():
        routes[path] = Route(path, _dispatch(methods), methods=list(methods))
    return list(routes.values())


def _csrf_checked(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """Refuse a write a cross-site form could send (see ``auth.csrf_refusal``)."""

    @functools.wraps(endpoint)
    async def checked(request: Request) -> Response:
        refusal = csrf_refusal(request.method, request.headers)
        return refusal if refusal is not None else await endpoint(request)

    return checked


def _known_queries(endpoint: Callable[..., Any], known: frozenset[str]) -> Callable[..., Any]:
    """Refuse a URL whose %-escapes are no UTF-8 (on every route: ``/api/v1/%FF/notes``
    was answered "'\ufffd' is not a vault id") and the query parameters ``openapi.json``
    does not list for the route."""

    @functools.wraps(endpoint)
    async def checked(request: Request) -> Response:
        check_url_path(request)
        check_query_names(request, known)
        return await endpoint(request)  # type: ignore[no-any-return]

    return checked


def _dispatch(methods: dict[str, Callable[..., Any]]) -> Callable[..., Any]:
    """One endpoint for a path served by several methods (GET/PUT/DELETE of a note)."""
    if len(methods) == 1:
        return next(iter(methods.values()))

    async def endpoint(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        return await methods[method](request)  # type: ignore[no-any-return]

    return endpoint


def api_app(core: Core, login_link: Callable[..., Any]) -> Starlette:
    """The API as an app of its own, so its 404/405 answers use the API's error body."""
    return Starlette(
        routes=api_routes(core, login_link),
        exception_handlers={HTTPException: http_exception, Exception: server_error},
    )


def _write_body(data: bytes, spec: dict[str, tuple[Any, Any]]) -> dict[str, Any]:
    """A PUT's JSON body, the tool's arguments; one of another shape says how to send a
    file as it is: a ``.json`` file PUT as ``application/json`` was refused as having
    "unknown field(s)", or written as its ``content`` field alone when it had one."""
    try:
        return fields(json_object(data), spec)
    except InvalidArgumentError as err:
        raise InvalidArgumentError(
            f'{err.message} (a JSON body holds the write\'s arguments: {{"content": <the'
            ' file\'s text>, "encoding", "if_match", "reason"}; to store a file as it'
            " is, a .json file too, send it with a text type such as text/plain)"
        ) from None
