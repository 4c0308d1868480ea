"""Delete and edit requests, by plain code (no LLM).

An edit keeps the protected frontmatter fields (``id``, ``created``) at the values on
disk, whatever the request says, and writes with ``if_match`` so that a concurrent
change made between our read and our write is not lost: on ``conflict`` the edit is
re-applied once to the fresh text.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_client.notes import render_note, split_note, unreadable_block
from agent_client.vault import Vault
from shared.errors import ConflictError, InvalidFrontmatterError
from shared.frontmatter import PROTECTED_KEYS
from shared.models import Action, DeleteAction, EditAction


@dataclass(frozen=True)
class ActionResult:
    """What an action did: the path (as the vault spells it), and the new etag for an
    edit; ``changed`` False when the edit left the note as it was (nothing written),
    ``ignored`` what of the request changed nothing (a protected key set, a key removed
    that the note has not)."""

    path: str
    deleted: bool = False
    etag: str | None = None
    changed: bool = True
    ignored: tuple[str, ...] = ()


# The reason recorded in history for a change the user asked the chat agent for.
ACTION_REASON = "memory_writer_action:{kind} (asked by the user)"


async def run_action(vault: Vault, action: Action) -> ActionResult:
    if isinstance(action, DeleteAction):
        result = await vault.delete(action.path, reason=ACTION_REASON.format(kind="delete"))
        return ActionResult(path=result.get("path", action.path), deleted=True)
    return await _edit(vault, action)


def apply_edit(text: str, action: EditAction) -> str:
    """The note text after ``action``; protected fields keep their values from ``text``.
    ``InvalidFrontmatterError`` when its block cannot be read: the edit would stack a
    second block on it (or drop it with a new body)."""
    problem = unreadable_block(text)
    if problem is not None:
        raise InvalidFrontmatterError(
            f"the note's frontmatter block cannot be read ({problem}); fix the block first"
        )
    meta, body = split_note(text)
    new_meta = dict(meta)
    for key, value in (action.frontmatter or {}).items():
        if key in PROTECTED_KEYS:
            continue
        if value is None:
            new_meta.pop(key, None)
        else:
            new_meta[key] = value
    for key in PROTECTED_KEYS:
        if key in meta:
            new_meta[key] = meta[key]
    if action.body is None:  # (the body as it is: its leading blank lines were dropped)
        return render_note(new_meta, body, body_as_is=True)
    return render_note(new_meta, action.body)


def ignored_by(text: str, action: EditAction) -> tuple[str, ...]:
    """What of ``action`` changes nothing in ``text``, in words: a protected key it sets,
    a key it removes that the note has not."""
    meta, _ = split_note(text)
    ignored = []
    for key, value in (action.frontmatter or {}).items():
        if key in PROTECTED_KEYS:
            ignored.append(f"{key} is kept as it is")
        elif value is None and key not in meta:
            ignored.append(f"the note has no {key} to remove")
    return tuple(ignored)


async def _edit(vault: Vault, action: EditAction) -> ActionResult:
    for attempt in range(2):
        current = await vault.read(action.path)
        edited = apply_edit(current["content"], action)
        ignored = ignored_by(current["content"], action)
        path = current.get("path", action.path)  # as the vault spells it (NFC, no ./)
        if edited == current["content"]:  # (written, it changed only ``updated``)
            return ActionResult(path, etag=current["etag"], changed=False, ignored=ignored)
        try:
            result = await vault.write(
                action.path,
                edited,
                if_match=current["etag"],
                reason=ACTION_REASON.format(kind="edit"),
            )
        except ConflictError:
            if attempt:
                raise
            continue
        return ActionResult(path=result.get("path", path), etag=result["etag"], ignored=ignored)
    raise AssertionError("unreachable")
