"""The two hooks an agent application wires in: seed 000's two producers of the writer.

1. **End of an agent turn** (``remember_turn``): one call hands the turn's memory entries
   to the writer and returns at once; the merging happens on the writer's thread and each
   result arrives as a ``SystemNotice``. Entries may be ``MemoryEntry`` objects or plain
   mappings (what a model's JSON gives). A bad entry is refused and reported in the
   receipt; the others are still queued, and nothing is raised into the host's turn.
2. **The chat agent's tool** (``memory_writer_action_tool`` / ``run_memory_writer_action``):
   the ``memory_writer_action`` function definition, in OpenAI's function-calling shape,
   for delete/edit requests; the runner takes the model's JSON arguments, validates them,
   runs the action on the writer (plain code, no LLM) and returns a JSON-able result, or
   an error string the model can read and tell the user (``"<code>: what was wrong"``).
   A host that wants the exceptions instead calls ``MemoryWriter.execute_action_async``.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any

from agent_client.image_files import check_image_files
from agent_client.writer import MemoryWriter, WriterClosedError, get_writer
from shared.errors import IndexerOfflineError, VaultError
from shared.frontmatter import LIST_COMMAS
from shared.models import Action, DeleteAction, EditAction, MemoryEntry
from shared.timestamps import parse_timestamp

logger = logging.getLogger("agent_client.hooks")

MEMORY_WRITER_ACTION = "memory_writer_action"
_ENTRY_KEYS = {f.name for f in fields(MemoryEntry)}
_ACTION_KEYS = {"action", "lang", "path", "body", "frontmatter"}

_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": MEMORY_WRITER_ACTION,
        "description": (
            "Delete a note of the user's long-term memory, or edit it (replace its body "
            "and/or set frontmatter keys). Use it only when the user asks to forget or "
            "correct something remembered; find the note's path first (search). A note's "
            "id and created date never change."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": ["delete", "edit"],
                    "description": "delete the note, or edit it",
                },
                "path": {
                    "type": "string",
                    "description": "the note's path in the vault, e.g. items/past-tense-of-go.md",
                },
                "lang": {
                    "type": "string",
                    "description": "the vault, e.g. en, ja, zh-Hans (default: this chat's)",
                },
                "body": {
                    "type": "string",
                    "description": "edit: the complete new body (Markdown, no frontmatter)",
                },
                "frontmatter": {
                    "type": "object",
                    "description": "edit: frontmatter keys to set; null removes a key",
                    "additionalProperties": True,
                },
            },
            "required": ["action", "path"],
            "additionalProperties": False,
        },
    },
}


@dataclass(frozen=True)
class TurnReceipt:
    """What ``remember_turn`` did: the ids queued, and why each other entry was refused."""

    queued: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


def remember_turn(
    entries: Iterable[MemoryEntry | Mapping[str, Any]],
    *,
    writer: MemoryWriter | None = None,
    lang: str | None = None,
) -> TurnReceipt:
    """Queue what an agent turn wants remembered; returns at once, never raises for an entry.

    An entry is refused (listed in the receipt) when it is not valid or a knowledge
    entry's image cannot be attached (``check_image_files``, as ``remember --image``).

    ``lang`` is the vault of mappings that name none. ``writer`` defaults to the
    process-wide one (``configure_writer``).
    """
    good: list[MemoryEntry] = []
    refused: list[str] = []
    if isinstance(entries, str | bytes | MemoryEntry | Mapping) or not isinstance(
        entries, Iterable
    ):  # one entry given alone (a text was refused a character at a time; None raised)
        entries = [entries]
    for number, item in enumerate(entries, 1):
        try:
            entry = item if isinstance(item, MemoryEntry) else entry_from_mapping(item, lang)
            entry.validate()
            if entry.kind == "knowledge" and entry.images:  # (an event keeps none)
                writer = writer or get_writer()
                check_image_files(entry.images, writer.settings.max_image_bytes)
        except (ValueError, TypeError) as exc:
            refused.append(f"entry {number}: {exc}")
            continue
        good.append(entry)
    for reason in refused:
        logger.warning("memory entry refused: %s", reason)
    if good:
        try:
            (writer or get_writer()).submit(good)
        except (ValueError, RuntimeError) as exc:  # a closed writer
            logger.error("memory entries not queued: %s", exc)
            return TurnReceipt([], refused + [f"entry {e.id}: {exc}" for e in good])
    return TurnReceipt([e.id for e in good], refused)


def entry_from_mapping(data: Mapping[str, Any], lang: str | None = None) -> MemoryEntry:
    """A ``MemoryEntry`` from JSON-like data; ``ValueError`` saying what is wrong."""
    if not isinstance(data, Mapping):
        raise ValueError(f"an entry must be a MemoryEntry or an object, not {type(data).__name__}")
    unknown = sorted(set(data) - _ENTRY_KEYS)
    if unknown:
        raise ValueError(f"unknown fields {unknown}; known: {sorted(_ENTRY_KEYS)}")
    missing = [key for key in ("kind", "title", "content") if key not in data]
    if missing:
        raise ValueError(f"missing fields {missing}")
    vault = data.get("lang") or lang
    if not vault:
        raise ValueError("lang is missing: name the vault, e.g. en")
    extra: dict[str, Any] = {}
    if data.get("id") is not None:  # "" is refused by validate, as the README says: 1-128
        extra["id"] = str(data["id"])
    return MemoryEntry(
        lang=vault,
        kind=data["kind"],
        title=data["title"],
        content=data["content"],
        tags=_string_list(data, "tags"),
        timestamp=_moment(data.get("timestamp")),
        images=_string_list(data, "images"),
        **extra,
    )


def _string_list(data: Mapping[str, Any], key: str) -> list[str]:
    """``data[key]`` as a list of strings; ``ValueError`` for anything else.

    One string is refused rather than taken as a one-item list: ``list("grammar")``
    made seven one-letter tags, and guessing (one tag? comma-separated?) would write
    the wrong thing silently; the refusal tells the model to send ``["grammar"]``.
    """
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise ValueError(
            f"{key} must be a list of strings, e.g. {_example(value)!r}, not {type(value).__name__}"
        )
    bad = [item for item in value if not isinstance(item, str)]
    if bad:
        raise ValueError(f"{key} must hold strings only, not {bad[0]!r:.60}")
    return list(value)


def _example(value: object) -> list[str]:
    """The list a string probably meant, for the refusal's hint: its items as a write cuts
    a string of tags (at any script's comma: ``"a, b"`` hinted ``['a, b']``, one tag)."""
    if not isinstance(value, str):
        return ["text"]
    items = [item.strip()[:40] for item in LIST_COMMAS.split(value) if item.strip()]
    return items[:5] or ["text"]


def _moment(value: Any) -> datetime:
    if value is None:
        return datetime.now(UTC)
    if isinstance(value, datetime):
        return value
    if isinstance(value, str):
        return parse_timestamp(value)
    raise ValueError(f"timestamp must be ISO 8601 text with a zone, not {value!r}")


def memory_writer_action_tool() -> dict[str, Any]:
    """The ``memory_writer_action`` tool for a chat model (``tools=[...]``); a fresh copy."""
    return copy.deepcopy(_TOOL)


def action_from_arguments(arguments: str | Mapping[str, Any], lang: str | None = None) -> Action:
    """The action a ``memory_writer_action`` call asks for; ``ValueError`` saying why not."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"the arguments are not JSON ({exc.msg})") from None
        except RecursionError:  # (nested thousands deep: json's parser gives up)
            raise ValueError("the arguments are JSON nested too deep") from None
    if not isinstance(arguments, Mapping):
        raise ValueError("the arguments must be a JSON object")
    unknown = sorted(set(arguments) - _ACTION_KEYS)
    if unknown:
        raise ValueError(f"unknown arguments {unknown}; known: {sorted(_ACTION_KEYS)}")
    kind, path = arguments.get("action"), arguments.get("path")
    lang = arguments.get("lang") or lang
    if kind not in ("delete", "edit"):
        raise ValueError('action must be "delete" or "edit"')
    if not isinstance(path, str) or not path:
        raise ValueError("path must be the note's path, e.g. items/past-tense-of-go.md")
    if not isinstance(lang, str) or not lang:
        raise ValueError("lang is missing: name the vault, e.g. en")
    body, frontmatter = arguments.get("body"), arguments.get("frontmatter")
    action: Action
    if kind == "delete":
        if body is not None or frontmatter is not None:
            raise ValueError("delete takes no body or frontmatter")
        action = DeleteAction(lang, path)
    else:
        if body is not None and not isinstance(body, str):
            raise ValueError("body must be a string")
        if frontmatter is not None and not isinstance(frontmatter, Mapping):
            raise ValueError("frontmatter must be an object of keys to values")
        action = EditAction(lang, path, body, dict(frontmatter) if frontmatter else None)
    action.validate()
    return action


async def run_memory_writer_action(
    arguments: str | Mapping[str, Any],
    *,
    writer: MemoryWriter | None = None,
    lang: str | None = None,
) -> dict[str, Any] | str:
    """Run one ``memory_writer_action`` call: ``{"ok": true, ...}``, or an error string.

    ``lang`` is the vault when the model names none. Every failure is one line starting
    with its code (``invalid_argument``, ``not_found``, ``indexer_offline``,
    ``writer_closed``...).
    """
    try:
        action = action_from_arguments(arguments, lang)
    except ValueError as exc:
        return f"invalid_argument: {exc}"
    try:
        result = await (writer or get_writer()).execute_action_async(action)
    except IndexerOfflineError as exc:
        return f"{exc}. The memory is offline: tell the user the change was not made."
    except WriterClosedError as exc:  # the host is stopping: a refusal, not a crash
        return f"writer_closed: {exc}. Tell the user the change was not made."
    except VaultError as exc:
        return str(exc)
    except ValueError as exc:
        return f"invalid_argument: {exc}"
    done = "deleted" if result.deleted else "edited" if result.changed else "unchanged"
    reply: dict[str, Any] = {"ok": True, "action": done, "lang": action.lang, "path": result.path}
    if result.ignored:  # the model tells the user what it did: not the id it asked to set
        reply["ignored"] = list(result.ignored)
    return reply
