"""REST ``/status``'s walk for the files no tool can reach (``RecentWalks``): kept ten
times as long as it took (the page asks at every load; 100,000 notes took 0.2-0.3 s),
then walked again, so a name another program made shows within that time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from indexer.vault.unreachable import KEPT_WALKS, RecentWalks, Unreachable, unreachable
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
    now = {"en": {"count": 1, "sample": ["f3/ratio 3:2.md"], "partial": False}}
    deadline = time.monotonic() + 30  # (its last report at once, walked again behind it)
    while walks.report() != now and time.monotonic() < deadline:
        time.sleep(0.01)
    assert walks.report() == now


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


class GatedWalks:
    """The real walk (``unreachable``), held at one vault until released, and counted."""

    def __init__(self, held: str) -> None:
        self.held = held
        self.release = threading.Event()
        self.entered = threading.Event()
        self.walked: list[str] = []

    def __call__(self, vault_dir: Path, seconds: float) -> Unreachable:
        lang = vault_dir.parent.name
        self.walked.append(lang)
        if lang == self.held:
            self.entered.set()
            assert self.release.wait(30)
        return unreachable(vault_dir, seconds)


def in_thread(call: Callable[[], dict]) -> tuple[threading.Thread, list[dict]]:
    answers: list[dict] = []
    thread = threading.Thread(target=lambda: answers.append(call()), daemon=True)
    thread.start()
    return thread, answers


def test_a_vault_walked_again_does_not_hold_callers_of_the_others(tmp_path: Path) -> None:
    """One lock was held over every vault's walk: while a caller walked a large vault
    again, another asking /status waited for all of it, though each vault had a report
    kept (N vaults of 100,000 notes: N x 1 s). Now a vault walked before answers its
    last report at once, walked again behind it; a vault never walked is still waited
    for, and walked once for both."""
    languages = tmp_path / "ws" / "memory" / "languages"
    for lang in ("de", "en"):
        (languages / lang / "vault").mkdir(parents=True)
    (languages / "de" / "vault" / "CON.txt").write_text("x")  # (made by another program)
    gated = GatedWalks(held="en")
    walks = RecentWalks(Workspace(tmp_path / "ws"), seconds=5.0, walk=gated)
    began = time.monotonic()
    first, answers = in_thread(walks.report)
    assert gated.entered.wait(30)  # (de walked, en held)
    waiting, waited = in_thread(walks.report)
    waiting.join(0.1)
    assert waiting.is_alive()  # en never walked: nothing to answer but its walk
    gated.release.set()
    first.join(30)
    waiting.join(30)
    expected = {"de": {"count": 1, "sample": ["CON.txt"], "partial": False}}
    assert answers == waited == [expected]
    assert gated.walked.count("en") == 1  # (de's is kept ten times its 1 ms: walked again)
    time.sleep((time.monotonic() - began) * (KEPT_WALKS + 1))  # (past both walks' keeping)
    gated.release.clear()
    gated.entered.clear()
    (languages / "en" / "vault" / "ratio 3:2.md").write_text("# n\n")
    assert walks.report() == expected  # the last report at once, walked again behind it
    assert gated.entered.wait(30)
    assert walks.report() == expected  # (still being walked: its last report again)
    gated.release.set()
    now = expected | {"en": {"count": 1, "sample": ["ratio 3:2.md"], "partial": False}}
    deadline = time.monotonic() + 30
    while walks.report() != now and time.monotonic() < deadline:
        time.sleep(0.01)
    assert walks.report() == now
    assert gated.walked.count("en") >= 2  # (walked again: more once its short keep is out)


def test_a_report_long_out_of_date_is_not_answered_but_walked_for(tmp_path: Path) -> None:
    """A vault's last report was answered however old it was, walked again behind it: a
    name fixed (or made) by another program a minute after a status was read still
    showed as it was a minute before, at the next load of the page. It is answered at
    once only while its walk is recent (as long again as it was kept); later the caller
    waits for the walk, as for a vault never walked."""
    vault = tmp_path / "ws" / "memory" / "languages" / "en" / "vault"
    vault.mkdir(parents=True)
    (vault / "ratio 3:2.md").write_text("# made by another program\n")
    walks = RecentWalks(Workspace(tmp_path / "ws"), seconds=5.0)
    began = time.monotonic()
    assert walks.report()["en"]["count"] == 1
    took = time.monotonic() - began
    (vault / "ratio 3:2.md").rename(vault / "ratio 3 to 2.md")  # (the user fixed it)
    time.sleep(took * (2 * KEPT_WALKS + 1) + 0.05)  # (past its keep, and as long again)
    assert walks.report() == {}
    assert walks.in_folder("en", "") == ({"count": 0, "sample": [], "partial": False}, {})
