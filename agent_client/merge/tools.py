"""The vault tools offered to the merging LLM, and their executor.

Tools: ``read, find, grep, search, stat, write``, bound to the entry's lang (the model
never names a lang). The executor enforces the merge's safety rules:

- a model error (unknown tool, arguments that are not a JSON object of the declared
  parameters) raises ``MergeFailed``: the merge is abandoned and undone;
- an argument of a wrong type (``path`` a number, ``content`` a list) is told to the
  model as a refusal is, once: the same call sent again abandons the merge;
- a refusal by the vault (``not_found``, ``forbidden_path``...) is returned to the model
  as the tool result, so it can correct itself;
- ``write`` of an existing note requires a prior ``read`` and sends the etag read as
  ``if_match``; on ``conflict`` the note is re-read and its fresh text returned to the
  model, which may write again once (a second conflict abandons the merge); a write of
  a note the model has not read whole (made by someone else since its read found
  nothing) is refused with the note's text, read for the model;
- a write sent again as it was refused abandons the merge (the model is not taking in
  what it is told: it would go on to its step limit);
- ``changed`` lists the notes written with a text other than the one the model read:
  a merge that changed none is no merge, whatever the model confirms;
- a ``write`` that keeps less than half the words of a note as it was read, or a third
  of its length, is refused (``coverage``): a merge adds to a note, and a note written
  back as its frontmatter alone lost what it held;
- a ``write`` whose added lines hold next to none of the entry's words is refused
  (``coverage.explains``), logged: each note a merge changes must be traceable to its
  entry, not only the merge as a whole (a good merge beside an unrelated note);
- the model's ``id``, ``created`` and a folder summary's keys are dropped from what it
  writes (``model_keys``);
- every write carries the entry's reason (the journal adds it; the model's ``write``
  schema has no ``reason``: the model cannot name another entry).
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

from agent_client.merge.coverage import (
    MIN_KEPT,
    MIN_LENGTH,
    entry_share,
    explains,
    kept_share,
    length_share,
)
from agent_client.merge.journal import WriteJournal
from agent_client.merge.model_keys import KEY_LINE, without_model_keys
from agent_client.merge.paths import as_the_vault_spells
from shared.control_chars import printable
from shared.errors import ConflictError, InvalidFrontmatterError, VaultError
from shared.frontmatter import PROTECTED_KEYS, split_frontmatter
from shared.workspace import EVENTS_DIR, ITEMS_DIR

logger = logging.getLogger("agent_client.merge.tools")

_STR, _INT, _BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}

# name -> (description, properties, required)
TOOL_SPECS: dict[str, tuple[str, dict[str, dict[str, Any]], tuple[str, ...]]] = {
    "read": (
        "Read a vault file. Returns its content. Read a note before writing it.",
        {"path": _STR, "offset": _INT, "limit": _INT},
        ("path",),
    ),
    "find": (
        "List vault files matching a glob pattern (default **/*.md) under a folder.",
        {"pattern": _STR, "path": _STR, "limit": _INT},
        (),
    ),
    "grep": (
        "Search lines of vault files by regular expression (or fixed text).",
        {
            "pattern": _STR,
            "path": _STR,
            "glob": _STR,
            "fixed": _BOOL,
            "ignore_case": _BOOL,
            "limit": _INT,
        },
        ("pattern",),
    ),
    "search": (
        "Ranked full-text search over the vault's notes; returns paths, titles, snippets.",
        {
            "query": _STR,
            "limit": _INT,
            "type": _STR,
            "tags": {"type": "array", "items": _STR},
            "path": _STR,
        },
        ("query",),
    ),
    "stat": (
        "Whether a path exists, its type and size.",
        {"path": _STR},
        ("path",),
    ),
    "write": (
        "Write the complete text of a note (.md, with frontmatter). Replaces the file.",
        {"path": _STR, "content": _STR},
        ("path", "content"),
    ),
}

_PY_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "boolean": bool,
    "array": list,
}


class MergeFailed(Exception):
    """The model did not complete a valid merge (its fault, or the LLM endpoint's)."""


def tool_schemas(names: list[str]) -> list[dict[str, Any]]:
    """OpenAI ``tools=`` entries for ``names``."""
    out = []
    for name in names:
        description, props, required = TOOL_SPECS[name]
        out.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": description,
                    "parameters": {
                        "type": "object",
                        "properties": props,
                        "required": list(required),
                        "additionalProperties": False,
                    },
                },
            }
        )
    return out


MAX_REFUSAL_CHARS = 300  # of a refused write, kept to say why a claimed file is missing


class ToolExecutor:
    """Runs the model's tool calls against one lang's vault, writes through a journal."""

    def __init__(self, journal: WriteJournal, offered: list[str], entry: str = "") -> None:
        self.journal = journal
        self.entry = entry  # the entry's text: every note written must hold some of it
        self.vault = journal.vault
        self.offered = offered
        self.conflicts = 0
        self.written: list[str] = []  # notes the model wrote, in the order of first write
        self._etags: dict[str, str] = {}  # what the model last saw of each path
        self._seen: dict[str, str] = {}  # the whole text the model last read of a path
        self.originals: dict[str, str] = {}  # a note's whole text before the merge wrote it
        self.changed: list[str] = []  # notes written with a text other than the one read
        self.refused: dict[str, str] = {}  # the last refusal of a write, by path
        self._refused_writes: set[tuple[str, str]] = set()  # (path, digest of text)
        self._refused_calls: set[str] = set()  # digests of calls of wrong types

    def final_text(self, path: str) -> str:
        """The text the merge last wrote to (or read back from) ``path``."""
        return self._seen.get(path, "")

    def check_call(self, name: str, raw_args: str) -> dict[str, Any]:
        """The parsed arguments of a call, or ``MergeFailed`` for a malformed one."""
        if name not in self.offered:
            raise MergeFailed(f"the model called an unknown tool {name!r}")
        try:
            args = json.loads(raw_args or "{}")
        except json.JSONDecodeError:
            bad = raw_args[:200]
            raise MergeFailed(f"the arguments of {name!r} are not JSON: {bad!r}") from None
        except RecursionError:  # (nested thousands deep: json's parser gives up)
            raise MergeFailed(f"the arguments of {name!r} are JSON nested too deep") from None
        if not isinstance(args, dict):
            raise MergeFailed(f"the arguments of {name!r} are not a JSON object")
        if args.get("lang") == self.vault.lang:
            args.pop("lang")  # harmless: models sometimes repeat the bound lang
        _, props, required = TOOL_SPECS[name]
        unknown = sorted(set(args) - set(props))
        missing = [r for r in required if r not in args]
        if unknown or missing:
            raise MergeFailed(f"bad arguments for {name!r}: unknown {unknown}, missing {missing}")
        return args

    async def run(self, name: str, raw_args: str) -> str:
        """Execute one call; the text handed back to the model as the tool result."""
        args = self.check_call(name, raw_args)
        wrong = _wrong_type(name, args)
        if wrong is not None:
            return self._refuse_types(name, args, wrong)
        if name == "write":
            self._refuse_a_repeat(args["path"], args["content"])
        try:
            if name == "write":
                result: Any = await self._write(args["path"], args["content"])
            elif name == "read":
                result = await self._read(args["path"], args.get("offset", 0), args.get("limit"))
            else:
                result = await getattr(self.vault, name)(**args)
        except VaultError as exc:
            if exc.code == "indexer_offline":
                raise
            result = str(exc)
        if name == "write" and isinstance(result, str):  # refused: said if it is claimed
            self.refused[as_the_vault_spells(args["path"])] = result[:MAX_REFUSAL_CHARS]
            self._refused_writes.add(_write_key(args["path"], args["content"]))
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)

    def _refuse_types(self, name: str, args: dict[str, Any], wrong: str) -> str:
        """The refusal of a call whose arguments have a wrong type, for the model to
        correct (a model's slip ended the merge); ``MergeFailed`` when the same call
        comes again (not taking in what it is told, it would go on to its step limit)."""
        said = json.dumps([name, args], sort_keys=True)
        key = hashlib.sha256(said.encode("utf-8", "surrogatepass")).hexdigest()
        if key in self._refused_calls:
            raise MergeFailed(f"the model called {name} again as it was refused: {wrong}")
        self._refused_calls.add(key)
        return f"invalid_argument: {wrong}; call {name} again with the types its schema declares"

    def _refuse_a_repeat(self, asked: str, content: str) -> None:
        """``MergeFailed`` for a write sent again as it was refused: the model is not
        taking in what it is told (a note's text handed to it, a path it may not
        write), and would send it again to its step limit; the fallback merges now."""
        if _write_key(asked, content) in self._refused_writes:
            path = as_the_vault_spells(asked)
            said = self.refused.get(path, "")[:120]
            raise MergeFailed(f"the model wrote {path} again as it was refused ({said})")

    async def _read(self, path: str, offset: int, limit: int | None) -> dict[str, Any]:
        result = await self.vault.read(path, offset=offset, limit=limit)
        if result.get("encoding", "utf-8") != "utf-8":
            return {"path": path, "error": "not UTF-8 text: leave this file as it is"}
        whole = offset == 0 and (
            limit is None or len(result["content"].encode("utf-8")) >= result["size"]
        )
        path = result.get("path", path)  # as the vault spells it (NFC, no ./)
        if whole:  # a write needs the whole text read: a part written back cut the note
            self._etags[path] = result["etag"]
            self._seen[path] = result["content"]
            if path not in self.written:
                self.originals[path] = result["content"]
        return {"path": path, "content": result["content"], "size": result["size"]}

    async def _write(self, asked: str, content: str) -> dict[str, Any] | str:
        if not asked.endswith(".md"):
            return "invalid_argument: only .md notes can be written (images are attached for you)"
        path = as_the_vault_spells(asked)
        if not path.startswith(f"{ITEMS_DIR}/"):
            return (
                f"forbidden_path: merge knowledge into notes under {ITEMS_DIR}/ only"
                f" ({EVENTS_DIR}/ is written by code, the other files by their owners)"
            )
        content = without_model_keys(content, self._seen.get(path))
        dropped = _dropped_keys(self._seen.get(path), content)
        if dropped:
            return (
                f"invalid_argument: keep the frontmatter keys of {path} as you read them"
                f" (a person added them); missing: {', '.join(dropped)}"
            )
        original = self.originals.get(path)
        lost = None if original is None else _dropped_text(original, content)
        if lost is not None:
            return (
                f"invalid_argument: a merge adds to {path} and keeps what it holds; your"
                f" text {lost}. Write the whole note again: its text as you read it,"
                " with the entry merged in"
            )
        if_match = self._etags.get(path)
        if if_match is None:
            if (await self.vault.stat(path))["exists"]:
                return await self._unread(path)
            if_match = ""
        unexplained = self._not_the_entrys(path, content)
        if unexplained is not None:
            return unexplained
        try:
            result = await self.journal.write(path, content, if_match=if_match)
        except ConflictError:
            return await self._conflict(path)
        path = result.get("path", path)
        self._etags[path] = result["etag"]
        if path not in self.written:
            self.written.append(path)
        if content != self._seen.get(path) and path not in self.changed:
            # A note written back as read holds nothing of the entry (the server's own
            # frontmatter stamps would make its bytes, and etag, differ all the same).
            self.changed.append(path)
        self._seen[path] = content
        return {"path": path, "created": result["created"], "size": result["size"]}

    def _not_the_entrys(self, path: str, content: str) -> str | None:
        """The refusal of a write whose added lines hold next to none of the entry's
        words (``coverage.explains``), logged; None for a write the entry explains. A
        good merge beside it passed for the whole: every note must be traceable to it."""
        read = self.originals.get(path, "")
        if content == self._seen.get(path) or explains(self.entry, content, read):
            return None  # (a note written back as read: ``changed`` tells)
        logger.warning(
            "entry %s: the model's write of %s holds %s of the entry's words: refused,"
            " not the entry's",
            self.journal.entry_id,
            printable(path),
            f"{entry_share(self.entry, content, read) or 0:.0%}",
        )
        return (
            f"invalid_argument: what you add to {path} holds next to none of the entry's"
            f" words; write the entry into the notes it belongs in, and no other note"
            f" ({path} is left as it is)"
        )

    async def _unread(self, path: str) -> str:
        """A write of a note the model has not read whole: someone made it after the
        model's read found nothing, or the model never read it. Read it for the model
        (as a conflict is): told only to read it, a model that does not wrote it again
        and again to its step limit."""
        shown = await self._read(path, 0, None)
        refusal = f"invalid_argument: {path} exists and you had not read it whole"
        if "content" not in shown:
            return f"{refusal}: {shown.get('error', 'it cannot be read')}"
        return (
            f"{refusal} (someone else may have made it since). Its current text is below;"
            " merge the entry into this text and write the whole note again.\n\n"
            + str(shown["content"])
        )

    async def _conflict(self, path: str) -> str:
        """Someone else changed ``path``: show the model the fresh text, once."""
        self.conflicts += 1
        if self.conflicts > 1:
            raise MergeFailed(f"{path} kept changing under the merge (second conflict)")
        try:
            fresh = await self.vault.read(path)
        except VaultError as exc:
            if exc.code == "indexer_offline":
                raise
            self._etags.pop(path, None)
            self._seen.pop(path, None)  # (a new note there keeps no keys of the gone one)
            return f"conflict: {path} changed since you read it and is now gone ({exc})"
        self._etags[path] = fresh["etag"]
        self._seen[path] = fresh["content"]
        if path not in self.written:  # (what the merge keeps is now someone else's text)
            self.originals[path] = fresh["content"]
        return (
            f"conflict: {path} was changed by someone else after you read it. Its current "
            "text is below; apply your change to this text and write the whole note again.\n\n"
            + fresh["content"]
        )


_KINDS = {
    "string": "a string",
    "integer": "an integer",
    "boolean": "a boolean",
    "array": "an array",
}


def _is_a(value: object, kind: str) -> bool:
    """Whether a JSON value is of the schema's ``kind`` (``true`` is no integer)."""
    want = _PY_TYPES[kind]
    return isinstance(value, want) and not (want is int and isinstance(value, bool))


def _json_kind(value: object) -> str:
    """What a JSON value is, in JSON's words (``12`` is a number, ``[...]`` an array)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _wrong_type(name: str, args: dict[str, Any]) -> str | None:
    """What is wrong with the types of a call's arguments, said for the model; None."""
    _, props, _ = TOOL_SPECS[name]
    for key, value in args.items():
        kind = props[key]["type"]
        if not _is_a(value, kind):
            return f"{key} of {name} must be {_KINDS[kind]}, not {_json_kind(value)}"
        items = props[key].get("items")
        if items is not None and not all(_is_a(item, items["type"]) for item in value):
            return f"{key} of {name} must be an array of {items['type']}s"
    return None


def _write_key(asked: str, content: str) -> tuple[str, str]:
    """A write told apart from others by its path and a digest of its text."""
    digest = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()
    return as_the_vault_spells(asked), digest


def _dropped_text(read: str, written: str) -> str | None:
    """What a write of ``read`` as ``written`` drops, said for the model, or None."""
    kept = kept_share(read, written)
    if kept is not None and kept < MIN_KEPT:
        return f"keeps {kept:.0%} of its words"
    length = length_share(read, written)
    if length is not None and length < MIN_LENGTH:
        return f"is {length:.0%} of its length"
    return None


def _dropped_keys(read: str | None, written: str) -> list[str]:
    """The frontmatter keys of the note as read that the model's text leaves out (the
    vault keeps ``id`` and ``created`` itself and stamps ``updated``). Keys as written,
    not as parsed: a block YAML cannot read (``on: monday`` is a boolean key to it) has
    keys all the same, and a written block the vault will refuse is its to say."""
    if read is None:
        return []
    kept = set(_written_keys(written))
    managed = {*PROTECTED_KEYS, "updated"}
    return [key for key in _written_keys(read) if key not in kept and key not in managed]


def _written_keys(text: str) -> list[str]:
    """The top-level keys of a note's frontmatter block, as written."""
    try:
        block, _ = split_frontmatter(text.replace("\r\n", "\n").lstrip("\ufeff"))
    except InvalidFrontmatterError:
        return []
    lines = (block or "").splitlines()
    return [m.group(2) for m in map(KEY_LINE.match, lines) if m is not None]
