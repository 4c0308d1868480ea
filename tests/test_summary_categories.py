"""A folder summary's categories are the notes' types as a reader sees them: one type
spelled composed (NFC, as Linux keyboards type) and decomposed (NFD, as macOS file
tools and some editors save it) is one category, as the search's type filter has it."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.core import Core
from indexer.daemon import build_core
from indexer.settings import Settings
from shared.frontmatter import parse_frontmatter
from shared.workspace import Workspace

# A type in Latin and Vietnamese letters with marks, and in Hangul (syllables or jamo).
TYPES = ["café", "Ghi chú", "회의"]


@pytest.fixture
def core(tmp_path: Path) -> Iterator[Core]:
    built = build_core(Settings(workspace=Workspace(tmp_path / "ws"), model=None))
    yield built
    if built.jobs is not None:
        built.jobs.stop()
    if built.index is not None:
        built.index.close()


def vault(tmp_path: Path) -> Path:
    return tmp_path / "ws" / "memory" / "languages" / "fr" / "vault"


@pytest.mark.parametrize("kind", TYPES)
async def test_a_type_typed_composed_and_decomposed_is_one_category(
    tmp_path: Path, core: Core, kind: str
) -> None:
    folder = vault(tmp_path) / "notes"
    folder.mkdir(parents=True)
    for name, form in (("a.md", "NFC"), ("b.md", "NFD")):
        spelled = unicodedata.normalize(form, kind)
        (folder / name).write_text(f"---\ntype: {spelled}\n---\n# {name}\n\nTexte {name}.\n")
    assert unicodedata.normalize("NFD", kind) != unicodedata.normalize("NFC", kind)
    assert core.index is not None and core.summaries is not None
    core.index.reconcile()
    await core.summaries.run_pass()
    text = (folder / ".overview.md").read_text(encoding="utf-8")
    meta, body = parse_frontmatter(text)
    composed = unicodedata.normalize("NFC", kind)
    assert meta["categories"] == [composed]
    assert meta["child_count"] == 2
    assert body.count("\n## ") == 1 and f"## {composed} (2)" in body
