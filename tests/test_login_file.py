"""``indexer open``'s login page file: the user's alone, in a folder of the user's alone,
whatever the umask; earlier runs' pages removed; a state folder not ours refused."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from indexer.cli.login_file import STALE_SECONDS, fragment_url, write_login_file
from shared.errors import OperationalError
from shared.workspace import Workspace

LINK = "http://127.0.0.1:8765/ui/login?code=abc-DEF_123"


def workspace(tmp_path: Path) -> Workspace:
    space = Workspace(tmp_path / "ws")
    space.state_dir.mkdir(parents=True, mode=0o700)
    return space


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_the_page_is_private_and_leads_to_the_fragment(tmp_path: Path) -> None:
    space = workspace(tmp_path)
    old = os.umask(0)
    try:
        page = write_login_file(space, LINK)
    finally:
        os.umask(old)
    assert mode(page) == 0o600 and mode(page.parent) == 0o700
    text = page.read_text()
    assert "http://127.0.0.1:8765/ui/login#code=abc-DEF_123" in text and "?code=" not in text
    assert fragment_url(LINK) == "http://127.0.0.1:8765/ui/login#code=abc-DEF_123"
    second = write_login_file(space, LINK)
    assert second != page and page.exists()  # a page a browser may not have read yet stays


def test_a_login_folder_open_to_others_is_narrowed_and_old_pages_go(tmp_path: Path) -> None:
    space = workspace(tmp_path)
    folder = space.state_dir / "login"
    folder.mkdir()
    folder.chmod(0o777)
    stale = folder / "login-old.html"
    stale.write_text("spent")
    then = time.time() - STALE_SECONDS - 5
    os.utime(stale, (then, then))
    other = folder / "keep.txt"
    other.write_text("not ours to remove")
    write_login_file(space, LINK)
    assert mode(folder) == 0o700 and not stale.exists() and other.exists()


def test_a_linked_login_folder_is_refused(tmp_path: Path) -> None:
    space = workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (space.state_dir / "login").symlink_to(elsewhere)
    with pytest.raises(OperationalError, match="--print"):
        write_login_file(space, LINK)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder to another user")
def test_a_state_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    space = workspace(tmp_path)
    os.chown(space.state_dir, 65534, 65534)
    with pytest.raises(OperationalError, match="belongs to user 65534"):
        write_login_file(space, LINK)
    assert list(space.state_dir.iterdir()) == []


def test_a_link_without_a_code_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OperationalError, match="no code"):
        write_login_file(workspace(tmp_path), "http://127.0.0.1:1/ui/login")
