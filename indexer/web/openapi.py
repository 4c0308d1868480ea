"""The OpenAPI 3.1 document of ``/api/v1``, written out by hand from the route table.

Kept beside ``api.py`` rather than generated: the routes are few, and a test checks
that every route of the app is here and every operation here is a route. Result
schemas name the keys the tools promise and allow more (results grow, e.g. search's
``total``), so a newer core never breaks an older script.
"""

from __future__ import annotations

import functools
from typing import Any

import indexer
from indexer.vault.timeline import MAX_HISTORY_LIMIT
from indexer.web.openapi_schemas import BOOL, COUNT, SCHEMAS, STR, _body, _ref

LANG_PATTERN = r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
ERRORS = {
    "400": "invalid_argument, invalid_lang or invalid_frontmatter",
    "401": "unauthorized: a token is set and neither it nor the page's cookie came",
    "403": "forbidden_path: the path would leave the vault or is not a note/image; "
    "forbidden_origin: the Origin header is not allowed",
    "404": "not_found: no such file, or a feature this indexer lacks",
    "412": "conflict: the file changed since it was read (If-Match), or exists (If-None-Match)",
    "413": "too_large: the file or body is over the limit",
    "415": "unsupported_media_type: a body of a type the route does not take",
    "421": "misdirected_request: the Host header names no host this indexer serves",
    "503": "unavailable: too many requests or connections at once; retry shortly",
    "507": "internal: no space is left on the disk that holds the vault",
}
READ_ERRORS = ("400", "401", "403", "404", "413", "503")
WRITE_ERRORS = ("400", "401", "403", "404", "412", "413", "415", "503", "507")


def _param(name: str, where: str, schema: dict, required: bool = False, doc: str = "") -> dict:
    param = {"name": name, "in": where, "schema": schema, "required": required or where == "path"}
    if doc:
        param["description"] = doc
    return param


LANG = _param(
    "lang", "path", {"type": "string", "pattern": LANG_PATTERN, "maxLength": 35}, doc="vault id"
)
PATH = _param(
    "path", "path", {"type": "string", "minLength": 1}, doc="POSIX path in the vault (may hold /)"
)


def _q(name: str, schema: dict, doc: str = "", required: bool = False) -> dict:
    return _param(name, "query", schema, required, doc)


AFTER = _q(
    "after",
    {"type": "string", "minLength": 1},
    "a page: only what is listed after this path, in the listing's order (by path);"
    " give the last path of the page before (next_after). A cursor, not an offset: right"
    " when files come and go between pages",
)


def _limit(high: int, default: int) -> dict:
    return _q("limit", {"type": "integer", "minimum": 1, "maximum": high, "default": default})


def _op(
    summary: str,
    params: list[dict],
    ok: dict[str, tuple[str, str]],
    errors: tuple[str, ...],
    body: dict | None = None,
    required: bool = True,
) -> dict:
    responses: dict[str, Any] = {}
    for status, (schema, doc) in ok.items():
        content = {"application/json": {"schema": _ref(schema)}} if schema else None
        responses[status] = {"description": doc, **({"content": content} if content else {})}
    for status in errors:
        responses[status] = {
            "description": ERRORS[status],
            "content": {"application/json": {"schema": _ref("Error")}},
        }
    op: dict[str, Any] = {"summary": summary, "parameters": params, "responses": responses}
    if body is not None:
        op["requestBody"] = {"required": required, "content": body}
    return op


def _json(schema: str) -> dict:
    return {"application/json": {"schema": _ref(schema)}}


REASON = _q("reason", STR, "why, at most 500 characters (kept in history)")
VERSION_Q = _q("version", {"type": "string"}, "an older version from history (read-only)")
IF_MATCH = _param(
    "If-Match", "header", STR, doc='"<etag>" you read: refuse if it changed; *: if it exists'
)
IF_NONE_MATCH = _param("If-None-Match", "header", STR, doc="* on a write: must not exist yet")
FILE_READ = [LANG, PATH, VERSION_Q, _param("If-Match", "header", STR, doc='"<etag>",...: else 412')]


def query_names(route: str, method: str) -> frozenset[str]:
    """The query parameters this document lists for a route's operation (``route`` as in
    the route table, ``{path:path}`` and all): the API takes no others."""
    item = document()["paths"].get(route.replace(":path}", "}"), {})
    params = item.get(method.lower(), {}).get("parameters", [])
    return frozenset(p["name"] for p in params if p["in"] == "query")


@functools.cache
def document() -> dict:
    """The whole OpenAPI document (built once)."""
    note_ops = {
        "get": _op(
            "read (tool `read`): JSON with content and etag; ETag header",
            [*FILE_READ, _q("offset", COUNT, "first line"), _q("limit", COUNT, "lines")],
            {"200": ("Read", "the file"), "304": ("", "unchanged (If-None-Match)")},
            (*READ_ERRORS, "412"),
        ),
        "put": _op(
            "write (tool `write`): a Markdown body, or JSON {content, encoding, if_match}",
            [LANG, PATH, REASON, IF_MATCH, IF_NONE_MATCH],
            {"200": ("Written", "replaced"), "201": ("Written", "created")},
            WRITE_ERRORS,
            {"text/markdown": {"schema": STR}, "text/plain": {"schema": STR}} | _json("WriteBody"),
        ),
        "delete": _op(
            "delete (tool `delete`); no body, or a JSON or text content type",
            [LANG, PATH, REASON, IF_MATCH],
            {"200": ("Deleted", "deleted")},
            ("400", "401", "403", "404", "415"),
        ),
    }
    posts = {
        "append": ("append (tool `append`)", "AppendBody", "Appended"),
        "move": ("move (tool `move`; needs history)", "MoveBody", "Moved"),
        "restore": ("restore (tool `restore`; needs history)", "RestoreBody", "Restored"),
        "undo": (
            "undo (tool `undo`; needs history): every file a memory entry changed goes back"
            " to before it, all or nothing (412 conflict: one changed since, nothing done)",
            "UndoBody",
            "Undone",
        ),
        "recall": ("recall (tool `recall`)", "RecallBody", "Recall"),
        "maintenance": (
            "a maintenance task's USER.md/PROJECT.md written as it is, recorded as the"
            " server's own maintenance job's",
            "MaintenanceBody",
            "Written",
        ),
    }
    paths: dict[str, Any] = {
        "/status": {
            "get": _op(
                "status (tool `status`) plus features and index state",
                [],
                {"200": ("Status", "status")},
                ("401",),
            )
        },
        "/openapi.json": {
            "get": {"summary": "this document", "responses": {"200": {"description": "OpenAPI"}}}
        },
        "/login-link": {
            "post": _op(
                "a one-time login link for the page (bearer token only; `indexer open`)",
                [],
                {"200": ("LoginLink", "path of the link, valid once for expires_in seconds")},
                ("400", "401", "413", "415"),  # (413: a body past 1 KiB)
                {"application/json": {"schema": _body({})}},
                required=False,
            )
        },
        "/summarize": {
            "post": _op(
                "a directory summaries pass now, by the server (`indexer summarize` beside it;"
                " lang null: every vault; force: redo unchanged folders); answers when done",
                [],
                {"200": ("Summarized", "what the pass did")},
                ("400", "401", "404", "415"),
                _json("SummarizeBody"),
                required=False,
            )
        },
        "/maintain": {
            "get": _op(
                "maintenance as the server runs it: its enabled tasks and model, and per vault"
                " and task what it last did and whether it is due (`indexer maintain --status`)",
                [],
                {"200": ("MaintenanceState", "")},
                ("401", "404"),
            ),
            "post": _op(
                "the server's enabled maintenance tasks run now, with its settings and model"
                " (`indexer maintain` beside it; force: past the digest and interval); answers"
                " their outcomes when done; 404 when none asked for is enabled",
                [],
                {"200": ("Maintained", "each task's outcome per vault")},
                ("400", "401", "404", "415"),
                _json("MaintainBody"),
                required=False,
            ),
        },
        "/{lang}/notes": {
            "get": _op(
                "find (tool `find`)",
                [
                    LANG,
                    _q(
                        "pattern",
                        STR,
                        "glob: ** spans folders, \\ escapes; a path it spells matches it",
                    ),
                    _q("path", STR),
                    _limit(10_000, 200),
                    _q("dirs", BOOL, "also list matching folders (paths ending in /)"),
                    AFTER,
                ],
                {"200": ("Find", "matching paths")},
                READ_ERRORS,
            )
        },
        "/{lang}/folder": {
            "get": _op(
                "a folder in one walk: its own text and other files, its subfolders with the"
                " count of text files below each (null: not counted in time) and their abstracts;"
                " the own files paged (limit for files and others together, after)",
                [LANG, _q("path", STR), _limit(10_000, 10_000), AFTER],
                {"200": ("Folder", "the folder")},
                READ_ERRORS,
            )
        },
        "/{lang}/notes/{path}": note_ops,
        "/{lang}/stat/{path}": {
            "get": _op("stat (tool `stat`)", [LANG, PATH], {"200": ("Stat", "")}, READ_ERRORS)
        },
        "/{lang}/head/{path}": {
            "get": _op(
                "a file's first bytes whatever its size (one over the read limit too)",
                [
                    LANG,
                    PATH,
                    _q("bytes", {**COUNT, "minimum": 1, "maximum": 65536}, "default 16384"),
                ],
                {"200": ("Head", "the beginning; truncated: the file holds more")},
                READ_ERRORS,
            )
        },
        "/{lang}/raw/{path}": {
            "get": _op(
                "a file's bytes with its type (images for the page; text as text/plain)",
                FILE_READ,
                {"200": ("", "the bytes"), "304": ("", "unchanged")},
                (*READ_ERRORS, "412"),
            )
        },
        "/{lang}/render/{path}": {
            "get": _op(
                "a note as sanitized HTML, frontmatter as properties",
                FILE_READ,
                {"200": ("Render", "")},
                (*READ_ERRORS, "412"),
            )
        },
        "/{lang}/search": {
            "get": _op(
                "search (tool `search`; snippets mark hits with **)",
                [
                    LANG,
                    _q(
                        "q",
                        STR,
                        'words and "phrases"; none (or empty) with type or tag: every note'
                        " the filter keeps, latest first",
                    ),
                    _limit(100, 10),
                    _q("offset", COUNT),
                    _q("type", STR),
                    _q("tag", {"type": "array", "items": STR}, "repeat for several"),
                    _q("path", STR, "folder prefix"),
                ],
                {"200": ("Search", "")},
                READ_ERRORS,
            )
        },
        "/{lang}/grep": {
            "get": _op(
                "grep (tool `grep`, RE2)",
                [
                    LANG,
                    _q("pattern", {"type": "string", "minLength": 1}, required=True),
                    _q("path", STR, "a folder, or one file (searched whatever the glob)"),
                    _q("glob", STR),
                    _q("fixed", BOOL),
                    _q("ignore_case", BOOL),
                    _limit(10_000, 100),
                ],
                {"200": ("Grep", "")},
                READ_ERRORS,
            )
        },
        "/{lang}/history/{path}": {
            "get": _op(
                "history (tool `history`)",
                [LANG, PATH, _limit(MAX_HISTORY_LIMIT, 20)],
                {"200": ("History", "")},
                READ_ERRORS,
            )
        },
        "/{lang}/diff/{path}": {
            "get": _op(
                "diff (tool `diff`; to= omitted: the current file)",
                [LANG, PATH, _q("from", STR, required=True), _q("to", STR)],
                {"200": ("Diff", "")},
                READ_ERRORS,
            )
        },
        "/{lang}/summary": {
            "get": _op(
                "summary (tool `summary`); format=html adds overview_html",
                [LANG, _q("path", STR), _q("format", {"enum": ["json", "html"]})],
                {"200": ("Summary", "")},
                READ_ERRORS,
            )
        },
    }
    for name, (summary, body, result) in posts.items():
        answers = {"200": (result, "")}
        if name == "maintenance":  # (a write: its file created, or replaced)
            answers = {"200": (result, "replaced"), "201": (result, "created")}
        paths[f"/{{lang}}/{name}"] = {
            "post": _op(summary, [LANG], answers, WRITE_ERRORS, _json(body))
        }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "vault memory REST API",
            "version": indexer.__version__,
            "description": "The Vault MCP tools over plain HTTP. Errors: "
            '{"error": {"code", "message"}} with the tools\' codes.',
        },
        "servers": [{"url": "/api/v1"}],
        "security": [{"bearer": []}, {"cookie": []}, {}],
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": "vault_ui_PORT"},
            },
        },
        "paths": paths,
    }
