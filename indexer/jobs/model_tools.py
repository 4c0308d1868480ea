"""A bounded tool loop in which a background job's model may only read one vault.

Seed 002's maintenance model may "drill down" into memory with read-only commands,
confined to the memory folder. Here those are four of the vault's own tools, bound to
one lang: ``read``, ``find``, ``grep`` and (with an index) ``search``, run by the same
``Vault``/``NoteIndex`` code as the MCP tools, so the sandbox rules hold (no dot-files,
no ``..``, no links out). Any other tool a model names (``write``, ``delete``, a shell)
is refused with a message and counted; nothing a model says can reach a writing call.
The loop is bounded in model turns (``max_steps``), in time (``timeout``), in calls a turn
(only those run are kept in the conversation: ``shared.tool_turn``), in what it reads in
all and in what the turns add to the conversation (``MAX_CONVERSATION_GROWTH``); results
are cut to ``MAX_RESULT_CHARS`` so that the conversation stays small.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from indexer.vault.sandbox import clean_relpath
from shared.errors import VaultError
from shared.tool_turn import tool_turn, with_note
from shared.utf8 import without_surrogates

if TYPE_CHECKING:
    from indexer.index.service import NoteIndex
    from indexer.jobs.llm import JobModel
    from indexer.vault.vault import Vault

log = logging.getLogger("indexer.jobs")
MAX_RESULT_CHARS = 20_000
MAX_LIST = 100
# What one run may read in all (a hostile model asked for 1,000 reads a turn: 80 MB of
# conversation re-sent at each turn), and the calls of one turn that are run.
MAX_READ_CHARS = 200_000
MAX_CALLS_PER_TURN = 16
# What the turns may add to the conversation past the prompt, in bytes (each run call's
# name and arguments, the model's text beside them, the results): the reads' bound in the
# widest UTF-8, with room to spare. Past it the run ends as an error.
MAX_CONVERSATION_GROWTH = 2 << 20

_PATH = {"type": "string", "description": "path relative to the vault root"}
_FOLDER = {"type": "string", "description": "folder to look in ('' = the vault root)"}
SCHEMAS: dict[str, dict[str, Any]] = {
    "read": {
        "description": "Read a note of the vault (offset/limit select lines).",
        "properties": {"path": _PATH, "offset": {"type": "integer"}, "limit": {"type": "integer"}},
        "required": ["path"],
    },
    "find": {
        "description": "List notes whose path matches a glob (** spans folders).",
        "properties": {"pattern": {"type": "string"}, "path": _FOLDER},
        "required": [],
    },
    "grep": {
        "description": "Lines matching a regex (or a literal with fixed=true).",
        "properties": {
            "pattern": {"type": "string"},
            "path": _FOLDER,
            "fixed": {"type": "boolean"},
            "ignore_case": {"type": "boolean"},
        },
        "required": ["pattern"],
    },
    "search": {
        "description": 'Ranked full-text search: words (all must match) and "phrases".',
        "properties": {"query": {"type": "string"}, "path": _FOLDER},
        "required": ["query"],
    },
}


class LoopError(Exception):
    """The tool loop ended without an answer (too many steps, too long)."""


class ReadOnlyTools:
    """The read-only tools of one vault, as a model sees and calls them."""

    def __init__(
        self, vault: Vault, index: NoteIndex | None, lang: str, quoted: set[str] | None = None
    ) -> None:
        self.vault = vault
        self.index = index
        self.lang = lang
        self.refused: list[str] = []  # names of the tools a model tried and was refused
        # the notes whose text a tool returned (their modes bound the file the job
        # writes: ``quoted_modes``)
        self.quoted: set[str] = quoted if quoted is not None else set()

    @property
    def names(self) -> tuple[str, ...]:
        return ("read", "find", "grep", "search") if self.index else ("read", "find", "grep")

    def schemas(self) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": SCHEMAS[name]["description"],
                    "parameters": {
                        "type": "object",
                        "properties": SCHEMAS[name]["properties"],
                        "required": SCHEMAS[name]["required"],
                        "additionalProperties": False,
                    },
                },
            }
            for name in self.names
        ]

    async def call(self, name: str, arguments: str) -> str:
        """The tool's result as JSON text, or a line starting with ``error:``."""
        if name not in self.names:
            self.refused.append(name)
            log.warning("maintenance model asked for the tool %r: refused", name)
            return (
                f"error: forbidden: {name!r} is not available; this job may only read "
                f"({', '.join(self.names)})"
            )
        try:
            args = without_surrogates(json.loads(arguments or "{}"))
        except (ValueError, RecursionError):  # (nested thousands deep: no arguments of ours)
            return "error: invalid_argument: the arguments are not JSON"
        if not isinstance(args, dict):
            return "error: invalid_argument: the arguments must be a JSON object"
        try:
            result = await asyncio.to_thread(self._run, name, args)
        except VaultError as err:
            return f"error: {err}"
        except (TypeError, ValueError) as err:
            return f"error: invalid_argument: {err}"
        self.quoted.update(_quoted_paths(name, result))
        text = json.dumps(result, ensure_ascii=False)
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + " …[cut: ask for less, e.g. read with limit]"
        return text

    def _run(self, name: str, args: dict[str, Any]) -> dict:
        lang, vault = self.lang, self.vault
        folder = _text(args, "path", "")
        if name == "read":
            return vault.read(lang, folder, _count(args, "offset", 0), args.get("limit"))
        if name == "find":
            return vault.find(lang, _text(args, "pattern", "**/*.md"), folder, MAX_LIST)
        if name == "grep":
            return vault.grep(
                lang,
                _text(args, "pattern"),
                folder,
                fixed=_flag(args, "fixed"),
                ignore_case=_flag(args, "ignore_case"),
                limit=MAX_LIST,
            )
        assert self.index is not None
        folder = clean_relpath(folder, allow_root=True)  # (as the search tool checks it)
        found = self.index.search(lang, _text(args, "query"), 10, path=folder)
        return {"results": found["results"]}


async def run_tool_loop(
    model: JobModel,
    messages: list[dict[str, Any]],
    tools: ReadOnlyTools,
    *,
    max_steps: int,
    timeout: float,
) -> str:
    """Chat until the model answers without a tool call; that answer's text.

    ``ModelError`` from the model goes up; ``LoopError`` when ``max_steps`` model turns
    or ``timeout`` seconds pass without a final answer.
    """
    conversation = list(messages)
    schemas = tools.schemas()
    read = 0  # characters of tool results so far
    grown = 0  # bytes the turns added to the conversation
    try:
        async with asyncio.timeout(timeout):
            for _ in range(max_steps):
                message = await model.chat(conversation, tools=schemas)
                turn = tool_turn(message.content, message.tool_calls or [], MAX_CALLS_PER_TURN)
                if not turn.calls:
                    return message.content or ""
                grown = _add(conversation, turn.message, grown)
                for number, call in enumerate(turn.calls):
                    if call.problem is not None:
                        result = f"error: invalid_argument: {call.problem}"
                    elif read >= MAX_READ_CHARS:
                        result = (
                            f"error: too_large: this job has read {MAX_READ_CHARS} characters,"
                            " all it may; answer with what you have"
                        )
                    else:
                        result = await tools.call(call.name, call.arguments)
                        read += len(result)
                    if number == len(turn.calls) - 1:
                        result = with_note(result, turn.dropped, MAX_CALLS_PER_TURN)
                    reply = {"role": "tool", "tool_call_id": call.id, "content": result}
                    grown = _add(conversation, reply, grown)
    except TimeoutError:
        raise LoopError(f"no answer within {timeout:g} s") from None
    raise LoopError(f"no answer within {max_steps} model turns (tool calls included)")


def _add(conversation: list[dict[str, Any]], message: dict[str, Any], grown: int) -> int:
    """Append ``message``; the bytes the turns have added, or ``LoopError`` past the bound
    (a model's long content or arguments, sent again at every turn)."""
    grown += len(json.dumps(message, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if grown > MAX_CONVERSATION_GROWTH:
        raise LoopError(
            f"the conversation grew by more than {MAX_CONVERSATION_GROWTH} bytes of tool"
            " calls and results"
        )
    conversation.append(message)
    return grown


_QUOTING_ROWS = {"grep": "matches", "search": "results"}  # tool -> its rows of text


def _quoted_paths(name: str, result: dict[str, Any]) -> list[str]:
    """The notes whose text ``result`` holds (find's names only: none)."""
    if name == "read":
        return [result["path"]]
    rows = _QUOTING_ROWS.get(name)
    return [row["path"] for row in result.get(rows, [])] if rows else []


def _text(args: dict[str, Any], key: str, default: str | None = None) -> str:
    value = args.get(key, default)
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _flag(args: dict[str, Any], key: str) -> bool:
    """A true/false argument (``"false"``, a string, was taken as true: a regex search
    when the model asked for a fixed one)."""
    value = args.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false")
    return value


def _count(args: dict[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{key} must be a whole number")
    return value
