"""REST ``/status``'s walk for the files no tool can reach (``RecentWalks``): kept ten
times as long as it took (the page asks at every load; 100,000 notes took 0.2-0.3 s),
then walked again, so a name another program made shows within that time."""

from __future__ import annotations

import time
from pathlib import Path

from indexer.vault.unreachable import KEPT_WALKS, RecentWalks
from shared.workspace import Workspace


def test_a_walk_is_kept_a_while_then_made_again(tmp_path: Path) -> None:
    vault = tmp_path / "ws" / "memory" / "languages" / "en" / "vault"
    for folder in range(20):
        (vault / f"f{folder}").mkdir(parents=True)
        for note in range(100):
            (vault / f"f{folder}" / f"n{note}.md").write_text("# n\n")
    walks = RecentWalks(Workspace(tmp_path / "ws"), seconds=5.0)
    began = time.monotonic()
    assert walks.report() == {}
    took = time.monotonic() - began
    (vault / "f3" / "ratio 3:2.md").write_text("# made by another program\n")
    assert walks.report() == {}  # (kept: asked again at once)
    time.sleep(took * (KEPT_WALKS + 1) + 0.01)
    assert walks.report() == {"en": {"count": 1, "sample": ["f3/ratio 3:2.md"], "partial": False}}


def test_a_folder_is_told_what_it_and_each_subfolder_hold_that_no_tool_reaches(
    tmp_path: Path,
) -> None:
    """The page's folder view (``in_folder``): a folder of only such names was "0 notes
    inside"."""
    vault = tmp_path / "ws" / "memory" / "languages" / "en" / "vault"
    (vault / "a" / "b" / "c").mkdir(parents=True)
    (vault / "a" / "x:y.md").write_text("# x\n")
    (vault / "a" / "b" / "c" / "p:q.md").write_text("# p\n")
    (vault / "a" / "b" / "ok.md").write_text("# ok\n")
    (vault / "top:level.md").write_text("# t\n")
    (vault / "a" / ".hidden:by design").write_text("")
    walks = RecentWalks(Workspace(tmp_path / "ws"), seconds=5.0)
    none = {"count": 0, "sample": [], "partial": False}
    assert walks.in_folder("en", "") == (
        {"count": 1, "sample": ["top:level.md"], "partial": False},
        {"a": 2},
    )
    assert walks.in_folder("en", "a") == (
        {"count": 1, "sample": ["a/x:y.md"], "partial": False},
        {"a/b": 1},
    )
    assert walks.in_folder("en", "a/b") == (none, {"a/b/c": 1})
    assert walks.in_folder("en", "a/b/c")[0]["sample"] == ["a/b/c/p:q.md"]
    assert walks.in_folder("fr", "") == (none, {})  # (no such vault)
