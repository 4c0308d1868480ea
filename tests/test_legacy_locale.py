"""Both commands under a locale whose encoding is not UTF-8 (``en_US.ISO-8859-1``).

Python decoded file names and arguments as Latin-1 there: an Arabic or Amharic note's
name held C1 control characters, so the index skipped it ("the path contains a control
character"), an Arabic query was searched as mojibake, and a note's name printed to a
pipe failed to encode. The commands now start again in Python's UTF-8 mode
(``shared.utf8_mode``). The locale is built with ``localedef`` (skipped without it).
"""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.indexer_process import start_indexer

AR_FOLDER, AR_NOTE = "ملاحظات", "قطة.md"
AM_NOTE = "ድመት.md"


@pytest.fixture(scope="module")
def legacy_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    localedef = shutil.which("localedef")
    if localedef is None:
        pytest.skip("no localedef to build a Latin-1 locale")
    where = tmp_path_factory.mktemp("locales")
    built = subprocess.run(
        [localedef, "-i", "en_US", "-f", "ISO-8859-1", str(where / "en_US.ISO-8859-1")],
        capture_output=True,
        check=False,
    )
    env = {**os.environ, "LOCPATH": str(where), "LC_ALL": "en_US.ISO-8859-1"}
    env.pop("PYTHONUTF8", None)
    env.pop("PYTHONIOENCODING", None)
    probe = [sys.executable, "-c", "import sys; print(sys.getfilesystemencoding())"]
    encoding = subprocess.run(probe, env=env, capture_output=True, text=True, check=True)
    if encoding.stdout.strip() != "iso8859-1":  # (localedef failed: no en_US source)
        pytest.skip(f"could not build the Latin-1 locale: {built.stderr.decode()[-200:]}")
    return env


def _workspace(root: Path) -> Path:
    ar = root / "memory" / "languages" / "ar" / "vault" / AR_FOLDER
    am = root / "memory" / "languages" / "am" / "vault"
    ar.mkdir(parents=True)
    am.mkdir(parents=True)
    (ar / AR_NOTE).write_text("---\ntitle: قطة\n---\nالقطة تحب الحليب kitten\n", "utf-8")
    (am / AM_NOTE).write_text("# ድመት\n\nድመት ወተት ትወዳለች kitten\n", "utf-8")
    return root


def _run(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[bytes]:
    """A command line as a shell there passes it: the arguments' UTF-8 bytes."""
    args = [os.fsencode(sys.executable), *(a.encode("utf-8") for a in argv)]
    return subprocess.run(args, env=env, capture_output=True, timeout=120, check=False)


def test_indexer_status_and_search_read_non_latin_names(
    legacy_env: dict[str, str], tmp_path: Path
) -> None:
    ws = str(_workspace(tmp_path / "ws"))
    reindex = _run(legacy_env, "-m", "indexer", "reindex", "--workspace", ws)
    assert reindex.returncode == 0, reindex.stderr
    assert b"control character" not in reindex.stderr
    status = _run(legacy_env, "-m", "indexer", "status", "--workspace", ws)
    assert status.returncode == 0, status.stderr
    assert b"unreachable" not in status.stdout + status.stderr
    assert b"ar: 1 note" in status.stdout and b"am: 1 note" in status.stdout
    found = _run(legacy_env, "-m", "indexer", "search", "قطة", "--lang", "ar", "--workspace", ws)
    assert found.returncode == 0, found.stderr
    assert f"{AR_FOLDER}/{AR_NOTE}".encode() in found.stdout  # (UTF-8 on a pipe)
    amharic = _run(legacy_env, "-m", "indexer", "search", "ድመት", "--lang", "am", "--workspace", ws)
    assert amharic.returncode == 0, amharic.stderr
    assert AM_NOTE.encode() in amharic.stdout


def test_the_indexer_serves_and_agent_client_finds_non_latin_names(
    legacy_env: dict[str, str], tmp_path: Path
) -> None:
    ws = _workspace(tmp_path / "ws")
    server = start_indexer(ws, env=legacy_env)
    try:
        common = ("--workspace", str(ws), "--lang", "ar")
        found = _run(legacy_env, "-m", "agent_client", "search", "قطة", *common)
        assert found.returncode == 0, found.stderr
        assert f"{AR_FOLDER}/{AR_NOTE}".encode() in found.stdout
        read = _run(legacy_env, "-m", "agent_client", "read", f"{AR_FOLDER}/{AR_NOTE}", *common)
        assert read.returncode == 0, read.stderr
        assert "القطة تحب الحليب".encode() in read.stdout
    finally:
        assert server.stop() == 0
    assert "control character" not in server.log()


def test_a_terminal_gets_its_locale_encoding(legacy_env: dict[str, str], tmp_path: Path) -> None:
    """On a Latin-1 terminal a name it can show is written in Latin-1 (UTF-8 would show
    mojibake there) and one it cannot as ``\\uNNNN``, never as bytes it misreads."""
    ws = _workspace(tmp_path / "ws")
    (ws / "memory" / "languages" / "ar" / "vault" / "café.md").write_text("kitten\n", "utf-8")
    assert _run(legacy_env, "-m", "indexer", "reindex", "--workspace", str(ws)).returncode == 0
    parent, child = pty.openpty()
    argv = [sys.executable, "-m", "indexer", "search", "kitten", "--lang", "ar"]
    proc = subprocess.Popen(
        [*argv, "--workspace", str(ws)], env=legacy_env, stdout=child, stderr=subprocess.PIPE
    )
    os.close(child)
    shown = b""
    while True:
        try:
            chunk = os.read(parent, 4096)
        except OSError:  # (the terminal closed with the process)
            break
        if not chunk:
            break
        shown += chunk
    os.close(parent)
    _, errors = proc.communicate(timeout=60)
    assert proc.returncode == 0, errors
    assert "café.md".encode("latin-1") in shown
    assert b"\\u0645\\u0644\\u0627" in shown  # (ملا..., the folder's name)
