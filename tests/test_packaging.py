"""What a user installs: the wheel, in a fresh venv outside the repository, serves the
prompts and resources, and an LLM merge works against it (the OpenAI-compatible stub)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from helpers.indexer_process import QUIET_ENV, wait_for
from helpers.llm_stub import LLMStub, final, running_llm_stub, tool_call

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.e2e
SKIPPED_WHEN_COPYING = (".git", ".venv", "node_modules", "build", "*.egg-info", "workspace", "docs")


def test_every_package_is_listed_in_pyproject() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    listed = set(config["packages"])
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for top in ("indexer", "agent_client", "shared")
        for init in (ROOT / top).rglob("__init__.py")
    }
    assert on_disk <= listed, f"add to pyproject's packages: {sorted(on_disk - listed)}"
    data = set(config["package-data"]) - on_disk - set(config.get("package-dir", {}))
    mapped = listed - on_disk - data
    assert mapped == set(config.get("package-dir", {})), "a listed package does not exist"
    assert data <= listed, "a folder of data files is no listed package (setuptools warns)"


def test_a_wheel_built_in_a_checkout_ships_only_what_it_holds(tmp_path: Path) -> None:
    """setuptools copies the packages into the checkout's build/lib and never took out
    what is gone from the checkout: a prompt deleted from prompts/ (or a module) left
    there by an earlier build still shipped (``pipx install .``, ``uv build --wheel``)."""
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SKIPPED_WHEN_COPYING))
    earlier = source / "build" / "lib" / "indexer"  # what an earlier build left
    (earlier / "prompts").mkdir(parents=True)
    (earlier / "prompts" / "deleted_spec.md").write_text("# deleted since\n")
    (earlier / "removed_module.py").write_text("GONE = True\n")
    uv = Path(sys.executable).with_name("uv")
    build = subprocess.run(
        [str(uv), "build", "-q", "--wheel", "-o", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = tmp_path.glob("vault_memory-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "indexer/prompts/vault_spec.md" in names
    assert "indexer/prompts/deleted_spec.md" not in names
    assert "indexer/removed_module.py" not in names


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv (outside the repository) with the built wheel installed; its bin/."""
    where = tmp_path_factory.mktemp("install")
    source = where / "source"  # a clean copy: an in-tree build/ may hold stale modules
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SKIPPED_WHEN_COPYING))
    # uv builds and installs as pip does, in seconds instead of ~40 s.
    uv = Path(sys.executable).with_name("uv")
    build = subprocess.run(
        [str(uv), "build", "-q", "--wheel", "-o", str(where), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = where.glob("vault_memory-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for text in sorted((ROOT / "prompts").rglob("*.md")):
        shipped = "indexer/prompts/" + text.relative_to(ROOT / "prompts").as_posix()
        assert shipped in names, f"the wheel lacks {shipped}"
    venv = where / "venv"  # a fresh venv, outside the repository
    subprocess.run([str(uv), "venv", "-q", str(venv)], check=True, timeout=120)
    install = subprocess.run(
        [str(uv), "pip", "install", "-q", "--python", str(venv / "bin" / "python"), str(wheel)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=where,
    )
    assert install.returncode == 0, install.stderr
    return venv / "bin"


@pytest.fixture
def served(installed: Path, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """The installed ``indexer serve``, started from a folder outside the repository."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INDEXER_", "PYTHON"))}
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [str(installed / "indexer"), "serve", "--workspace", str(workspace)],
            cwd=tmp_path,
            env={**env, **QUIET_ENV},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    url_file = workspace / "indexer.mcp.url"
    try:
        wait_for(lambda: url_file.exists() or process.poll() is not None, 60, what="the URL file")
        assert process.poll() is None, log.read_text()
        yield workspace, url_file.read_text().strip()
    finally:
        process.terminate()
        process.wait(30)


async def test_installed_indexer_serves_prompts_and_resources(served: tuple[Path, str]) -> None:
    _, url = served
    async with Client(url) as client:
        prompts = {p.name for p in await client.list_prompts()}
        resources = {str(r.uri) for r in await client.list_resources()}
    expected = {p.stem for p in (ROOT / "prompts").glob("*.md")}
    assert expected <= prompts
    assert {f"vault://prompts/{name}" for name in expected} <= resources
    assert "vault://skills/vault-memory" in resources


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


def test_installed_writer_merges_with_the_llm(
    installed: Path, served: tuple[Path, str], stub: LLMStub
) -> None:
    workspace, _ = served
    note = "---\ntitle: Past tense of go\n---\n# Past tense of go\n\nwent\n"
    stub.run(
        [
            tool_call("write", path="items/past-tense-of-go.md", content=note),
            final(["items/past-tense-of-go.md"], "Created the note."),
        ]
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_CLIENT_", "PYTHON"))}
    env.update(
        AGENT_CLIENT_WORKSPACE=str(workspace),
        VAULT_LLM_MODEL="stub-model",
        OPENAI_BASE_URL=stub.base_url,
        OPENAI_API_KEY="unused",
    )
    command = ["remember", "--lang", "en", "--json", "--title", "Past tense of go", "went"]
    done = subprocess.run(
        [str(installed / "agent-client"), *command],
        capture_output=True,
        text=True,
        env=env,
        cwd=workspace.parent,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    notice = json.loads(done.stdout)
    assert notice["method"] == "llm" and notice["updated_files"] == ["items/past-tense-of-go.md"]
    system = stub.requests[0]["messages"][0]["content"]
    assert "(mem_entry_spec)" in system and "(vault_spec)" in system  # served by the wheel
    text = (workspace / "memory/languages/en/vault/items/past-tense-of-go.md").read_text()
    assert "went" in text
