"""A move's destination, resolved and opened with refusals that name it.

The sandbox words its refusals for one path ("the path leaves the vault"); a move takes
two, and a caller could not tell which of them was refused. Whatever the sandbox refuses
while resolving or opening the destination is said of ``new_path``.
"""

from __future__ import annotations

from contextlib import ExitStack

from indexer.vault.sandbox import Place, Sandbox, Target
from shared.errors import ForbiddenPathError


def resolve_new_path(sandbox: Sandbox, lang: str, new_path: str) -> Target:
    """``new_path`` resolved (``Sandbox.resolve``), a refusal naming it."""
    try:
        return sandbox.resolve(lang, new_path)
    except ForbiddenPathError as exc:
        raise _naming_new_path(exc) from None


def open_new_path(stack: ExitStack, sandbox: Sandbox, dest: Target) -> Place:
    """The destination's folder opened on ``stack``, a refusal naming ``new_path``."""
    try:
        return stack.enter_context(sandbox.open(dest))
    except ForbiddenPathError as exc:
        raise _naming_new_path(exc) from None


def _naming_new_path(exc: ForbiddenPathError) -> ForbiddenPathError:
    said = exc.message
    if said.startswith("the path"):
        return ForbiddenPathError("new_path" + said[len("the path") :])
    return ForbiddenPathError(f"new_path: {said}")
