"""Drive the SDK's own memory tool and ours with the same commands, and compare.

``outcome`` renders a command's result exactly as the SDK's tool runner sends it to
the model (``tool_result`` content, and whether it is an error). ``MemoryPair`` holds
the SDK's ``BetaLocalFilesystemMemoryTool`` on a temp folder and our ``VaultMemoryTool``
on a fresh folder of a vault; ``step`` runs one command on both and checks that the
answers and then the files (as the model sees them) and folders are the same.

Two documented differences are taken out before comparing, and only these:
- a folder's size in a listing is the file system's (ext4 says 4K for a small folder,
  more for a big one, tmpfs 40B): the vault always says 4K, so the SDK's folder lines
  are read as 4K;
- a rename that fails leaves the SDK's new parent folders behind (it makes them before
  trying); ours changes nothing, so those folders are removed from the SDK's side.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anthropic.lib.tools._tool_dispatch import tool_error_content, tool_result_content
from anthropic.tools import BetaLocalFilesystemMemoryTool

from agent_client import ClientSettings, VaultMemoryTool
from shared.frontmatter import parse_frontmatter
from shared.memory_view import recorded_body

LISTING = "Here're the files and directories up to 2 levels deep in "


def outcome(tool: Any, inp: dict[str, Any]) -> tuple[Any, bool]:
    """(content, is_error) as the tool runner sends it (``BetaToolRunner._run_tool``)."""
    try:
        return tool_result_content(tool.call(inp)), False
    except Exception as exc:
        return tool_error_content(exc), True


def folder_sizes_as_vault(result: tuple[Any, bool]) -> tuple[Any, bool]:
    """The SDK's listing with each folder line's size read as the vault's 4K."""
    text, is_error = result
    if is_error or not isinstance(text, str) or not text.startswith(LISTING):
        return result
    header, *lines = text.split("\n")
    fixed = [header]
    for index, line in enumerate(lines):
        _, _, shown = line.partition("\t")
        fixed.append(f"4K\t{shown}" if index == 0 or shown.endswith("/") else line)
    return "\n".join(fixed), is_error


def sdk_state(root: Path) -> tuple[dict[str, str], set[str]]:
    """Files (rel -> text) and folders (rel) below the SDK's memory root."""
    found: dict[str, str] = {}
    folders: set[str] = set()
    for folder, dirs, names in os.walk(root):
        rel = Path(folder).relative_to(root).as_posix()
        prefix = "" if rel == "." else rel + "/"
        folders.update(prefix + d for d in dirs)
        for name in names:
            found[prefix + name] = Path(folder, name).read_bytes().decode("utf-8")
    return found, folders


def vault_state(root: Path) -> tuple[dict[str, str], set[str]]:
    """The same for our memory folder on disk, each ``.md`` read as the model sees it:
    its body, with the ``byte_order_marks`` and ``trailing_newlines`` its frontmatter
    records."""
    found, folders = sdk_state(root) if root.exists() else ({}, set())
    for rel, text in found.items():
        if rel.endswith(".md"):
            meta, body = parse_frontmatter(text)
            assert {"id", "title", "created", "updated"} <= set(meta), (rel, text)
            found[rel] = recorded_body(meta, body)
    return found, folders


@dataclass
class MemoryPair:
    """The SDK's tool and ours, each on a fresh, empty memory folder."""

    ref_base: Path
    vault_dir: Path
    ours: VaultMemoryTool
    ref: BetaLocalFilesystemMemoryTool = field(init=False)

    def __post_init__(self) -> None:
        self.ref = BetaLocalFilesystemMemoryTool(base_path=str(self.ref_base))

    @classmethod
    def open(cls, workspace: Path, lang: str, folder: str, ref_base: Path) -> MemoryPair:
        settings = ClientSettings(workspace=workspace)
        ours = VaultMemoryTool(lang, folder=folder, settings=settings)
        vault_dir = workspace / "memory" / "languages" / lang / "vault" / folder
        return cls(ref_base, vault_dir, ours)

    @property
    def ref_root(self) -> Path:
        return self.ref_base / "memories"

    def close(self) -> None:
        self.ours.close()
        shutil.rmtree(self.ref_base, ignore_errors=True)

    def step(self, inp: dict[str, Any]) -> tuple[Any, bool]:
        """Run ``inp`` on both; assert the same answer and the same files and folders."""
        before = sdk_state(self.ref_root)[1] if inp.get("command") == "rename" else None
        theirs = folder_sizes_as_vault(outcome(self.ref, inp))
        ours = outcome(self.ours, inp)
        assert ours == theirs, f"{inp!r}\n ours: {ours!r}\n SDK:  {theirs!r}"
        if before is not None and theirs[1]:
            for made in sorted(sdk_state(self.ref_root)[1] - before, key=len, reverse=True):
                (self.ref_root / made).rmdir()
        assert vault_state(self.vault_dir) == sdk_state(self.ref_root), f"after {inp!r}"
        return ours

    def run(self, commands: list[dict[str, Any]]) -> list[tuple[Any, bool]]:
        return [self.step(inp) for inp in commands]

    def clear(self) -> None:
        """``clear_all_memory`` on both: the same answer, and nothing left on either side."""
        assert self.ours.clear_all_memory() == self.ref.clear_all_memory() == "All memory cleared"
        assert vault_state(self.vault_dir) == sdk_state(self.ref_root) == ({}, set())
