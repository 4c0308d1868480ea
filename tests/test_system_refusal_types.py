"""A refusal the system gives (a file its permissions keep the indexer from writing) is
a ``SystemRefusedError``, one of the path asked for a plain ``ForbiddenPathError``: both
answer ``forbidden_path`` over MCP and 403 over REST (the SPEC's table), and the CLI
says the first failed (exit 1), the second was bad usage (exit 2). A read-only note's
write, append, delete and a folder move rewriting its links were refused as the path's
fault, by type."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers.history import vault_with_history
from helpers.snapshots import contents

from indexer.cli import EXIT_FAILED, EXIT_USAGE, exit_code
from indexer.vault.vault import Vault
from indexer.web.http_errors import STATUS_BY_CODE
from shared.errors import ForbiddenPathError, SystemRefusedError


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20) as made:
        made.write("en", "f/locked.md", "# Locked\n\nsee [a](../g/a.md)\n")
        made.write("en", "g/a.md", "# A\n")
        (made.sandbox.workspace.vault_dir("en") / "f/locked.md").chmod(0o444)
        yield made


REFUSED: dict[str, Callable[[Vault], object]] = {
    "write": lambda v: v.write("en", "f/locked.md", "# Changed\n"),
    "append": lambda v: v.append("en", "f/locked.md", "more\n"),
    "delete": lambda v: v.delete("en", "f/locked.md"),
    # (its relative link rewritten: a new file, refused as a write is)
    "move the note": lambda v: v.move("en", "f/locked.md", "h/i/locked.md"),
    "move its folder": lambda v: v.move("en", "f", "h/i"),
}


@pytest.mark.parametrize("call", REFUSED.values(), ids=REFUSED.keys())
def test_a_read_only_note_is_refused_as_the_system_refuses(
    vault: Vault, call: Callable[[Vault], object]
) -> None:
    memory = vault.sandbox.workspace.root / "memory"
    before = contents(memory)
    with pytest.raises(SystemRefusedError) as refused:
        call(vault)
    assert "read-only" in refused.value.message, refused.value
    assert refused.value.code == "forbidden_path" and STATUS_BY_CODE[refused.value.code] == 403
    assert exit_code(refused.value) == EXIT_FAILED
    assert contents(memory) == before


def test_a_path_the_vault_refuses_stays_the_paths_fault(vault: Vault) -> None:
    with pytest.raises(ForbiddenPathError) as refused:
        vault.delete("en", "../outside.md")
    assert not isinstance(refused.value, SystemRefusedError)
    assert exit_code(refused.value) == EXIT_USAGE
