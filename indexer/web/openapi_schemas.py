"""The result and body schemas of the OpenAPI document (``openapi.py``): what each
route answers and takes, named once and referred to by its operations."""

from __future__ import annotations

from typing import Any

from indexer.jobs.maintenance_tasks import TASKS


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict:
    return {
        "type": "object",
        "required": list(required),
        "properties": {**required, **(optional or {})},
    }


def _body(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict:
    return {**_obj(required, optional), "additionalProperties": False}


STR = {"type": "string"}
INT = {"type": "integer"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
NSTR = {"type": ["string", "null"]}
COUNT = {"type": "integer", "minimum": 0}
NCOUNT = {"type": ["integer", "null"], "minimum": 0}
VERSION = {"type": ["integer", "string"], "description": "a version from history"}
PATHS = {"type": "array", "items": STR}
SUBFOLDER = _obj({"path": STR, "files": NCOUNT, "unreachable": COUNT}, {"abstract": NSTR})
SCHEMAS: dict[str, Any] = {
    "Error": _obj(
        {"error": _obj({"code": STR, "message": STR})},
    ),
    "Status": _obj(
        {"version": STR, "langs": {"type": "object", "additionalProperties": INT}},
        {
            "workspace": STR,
            "index_ready": BOOL,
            "index_partial": BOOL,
            "sync": {"type": "object", "description": "why the index is behind, the watcher"},
            "search": BOOL,
            "features": {"type": "object"},
            "unreachable": {"type": "object", "description": "lang -> {count, sample, partial}"},
        },
    ),
    "Find": _obj(
        {"paths": PATHS, "truncated": BOOL},
        {
            "total": {**INT, "description": "every match, when the walk reached the end"},
            "next_after": {**STR, "description": "when truncated: after= for the next page"},
            "unlisted": {
                "type": "integer",
                "description": "with dirs: entries below the path no tool can reach",
            },
            "unlisted_sample": {**PATHS, "description": "with dirs: the first few of them"},
        },
    ),
    "Folder": _obj(
        {
            "path": STR,
            "files": {**PATHS, "description": "the folder's own text files"},
            "others": {**PATHS, "description": "the folder's own other files (pictures)"},
            "folders": {
                "type": "array",
                "items": SUBFOLDER,
                "description": "subfolders (but *.assets/): text files, unreachable entries below",
            },
            "total": {**INT, "description": "the folder's own files (files and others)"},
            "truncated": BOOL,
            "counted": BOOL,
            "unreachable": {"type": "object", "description": "{count, sample, partial}: here"},
        },
        {"next_after": {**STR, "description": "when truncated: after= for the next page"}},
    ),
    "Read": _obj(
        {"path": STR, "content": STR, "etag": STR, "size": INT, "mtime": NUM},
        {"encoding": {"enum": ["utf-8", "base64"]}},
    ),
    "Stat": _obj(
        {"path": STR, "exists": BOOL},
        {
            "type": {"enum": ["file", "dir", None]},
            "size": {"type": ["integer", "null"]},
            "mtime": {"type": ["number", "null"]},
            "etag": NSTR,
        },
    ),
    "Head": _obj(
        {"path": STR, "size": INT, "truncated": BOOL, "content": STR},
        {"encoding": {"enum": ["utf-8", "base64"]}, "max_file_bytes": INT},
    ),
    "Render": _obj(
        {"path": STR, "etag": STR, "html": STR, "properties": {"type": "object"}},
        {"frontmatter_error": NSTR, "size": INT, "mtime": NUM},
    ),
    "Written": _obj({"path": STR, "etag": STR, "created": BOOL, "size": INT}),
    "Appended": _obj({"path": STR, "etag": STR, "size": INT}),
    "Deleted": _obj({"path": STR, "deleted": {"const": True}}),
    "Moved": _obj(
        {"path": STR, "new_path": STR, "etag": NSTR, "relinked": {"type": "array", "items": STR}},
        {
            "files": INT,
            "relink_partial": BOOL,
            "relink_skipped": {
                "type": "array",
                "items": _obj({"path": STR, "error": STR}),
            },
        },
    ),
    "Restored": _obj({"path": STR, "etag": STR, "version": INT}, {"restored_from": INT}),
    "Search": _obj(
        {
            "results": {
                "type": "array",
                "items": _obj({"path": STR, "title": STR, "score": NUM, "snippet": STR}),
            },
            "partial": BOOL,
        },
        {"total": INT},
    ),
    "Grep": _obj(
        {
            "matches": {"type": "array", "items": _obj({"path": STR, "line": INT, "text": STR})},
            "truncated": BOOL,
        },
        {"unsearched": COUNT, "unsearched_sample": PATHS},  # files too large to read
    ),
    "History": _obj({"path": STR, "versions": {"type": "array", "items": {"type": "object"}}}),
    "Diff": _obj({"path": STR, "diff": STR}),
    "Summary": _obj({"path": STR, "abstract": STR, "overview": STR}, {"overview_html": STR}),
    "Recall": _obj({"block": STR, "tokens": INT, "sources": {"type": "array"}}),
    "LoginLink": _obj({"path": STR, "expires_in": {"type": ["integer", "null"]}}),
    "WriteBody": _body(
        {"content": STR},
        {"encoding": {"enum": ["utf-8", "base64"]}, "if_match": NSTR, "reason": NSTR},
    ),
    "AppendBody": _body({"path": STR, "content": STR}, {"create": BOOL, "reason": NSTR}),
    "MoveBody": _body({"path": STR, "new_path": STR}, {"if_match": NSTR, "reason": NSTR}),
    "UndoBody": _body({"entry_id": STR}, {"dry_run": BOOL}),
    "Undone": _obj(
        {"entry_id": STR, "dry_run": BOOL, "files": {"type": "array", "items": {"type": "object"}}}
    ),
    "RestoreBody": _body({"path": STR, "version": VERSION}, {"if_match": NSTR, "reason": NSTR}),
    "RecallBody": _body({"query": STR}, {"budget_tokens": INT, "path": STR}),
    "SummarizeBody": _body({}, {"lang": NSTR, "force": BOOL}),
    "MaintenanceBody": _body({"task": {"enum": sorted(TASKS)}, "content": STR}, {"if_match": NSTR}),
    "MaintainBody": _body(
        {}, {"lang": NSTR, "task": {"enum": [*sorted(TASKS), None]}, "force": BOOL}
    ),
    "Maintained": _obj({"model": NSTR, "outcomes": {"type": "array", "items": {"type": "object"}}}),
    "MaintenanceState": _obj(
        {"state": STR, "model": NSTR, "enabled": PATHS, "tasks": {"type": "array"}}
    ),
    "Summarized": _obj(
        {"folders": INT, "llm": INT, "fallback": INT, "skipped": INT, "removed": INT},
        {"noteless": INT, "unreadable": INT, "model_errors": INT, "seconds": NUM},
    ),
}
