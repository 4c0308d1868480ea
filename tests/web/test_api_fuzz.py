"""Schemathesis fuzzes every operation of the OpenAPI document against a real
``indexer serve``: no 5xx, answers that match the document, and nothing outside the
vault folders changes (the workspace's other files, a sibling folder)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
import schemathesis
from helpers.indexer_process import RunningIndexer, start_indexer
from hypothesis import HealthCheck, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.config._checks import NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES

from indexer.web.openapi import document

MAX_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
# A body past its route's cap is refused as too large (413) before it is read as JSON:
# a refusal of invalid data, which Schemathesis's list leaves out.
REFUSED = [*NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES, "413"]
CONFIG = SchemathesisConfig.from_dict(
    {"checks": {"negative_data_rejection": {"expected-statuses": REFUSED}}}
)
schema = schemathesis.openapi.from_dict(document(), config=CONFIG)
Snapshot = dict[str, tuple[str, str]]


def is_lang_folder(rel: Path) -> bool:
    """``ws/memory/languages/<lang>``: created with a new vault (a write creates one)."""
    return len(rel.parts) == 4 and rel.parts[:3] == ("ws", "memory", "languages")


def in_a_vault(rel: Path) -> bool:
    """``ws/memory/languages/<lang>/vault`` or below it."""
    return len(rel.parts) >= 5 and is_lang_folder(Path(*rel.parts[:4])) and rel.parts[4] == "vault"


def snapshot(root: Path) -> Snapshot:
    """Every file and folder under ``root`` except inside vaults and the indexer's state
    (both may legitimately change), with a content hash for files."""
    seen: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        rel_folder = Path(folder).relative_to(root)
        if rel_folder.parts[:2] == ("ws", ".indexer") or in_a_vault(rel_folder):
            dirs.clear()
            continue
        for name in files:
            if name.startswith("serve-"):
                continue  # the server's own log
            data = (Path(folder) / name).read_bytes()
            seen[str(rel_folder / name)] = ("file", hashlib.sha256(data).hexdigest())
        for name in dirs:
            rel = rel_folder / name
            if not in_a_vault(rel) and not is_lang_folder(rel):
                seen[str(rel)] = ("dir", "")
    return seen


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningIndexer, Path]]:
    root = tmp_path_factory.mktemp("fuzz")
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# secret\n")
    ws = root / "ws"
    vault = ws / "memory" / "languages" / "en" / "vault"
    (vault / "items").mkdir(parents=True)
    (vault / "items" / "go.md").write_text("---\ntitle: Go\n---\n# Go\nwent\n")
    (ws / "memory" / "languages" / "en" / "beside-the-vault.md").write_text("# beside\n")
    (ws / "memory" / "readme.md").write_text("# not a vault\n")
    (vault / "link").symlink_to(outside, target_is_directory=True)
    running = start_indexer(ws)
    before = snapshot(root)
    try:
        yield running, root
    finally:
        running.stop()
    after = snapshot(root)
    after.pop("ws/indexer.mcp.url", None)  # removed at shutdown, as it should be
    before.pop("ws/indexer.mcp.url", None)
    assert after == before, "a request changed something outside the vaults"


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
    database=None,
)
def test_api_fuzz(case: schemathesis.Case, fuzzed: tuple[RunningIndexer, Path]) -> None:
    server, _ = fuzzed
    base = server.url.removesuffix("/mcp") + "/api/v1"
    # Every other check runs (no 5xx, status codes, content types and bodies as
    # documented, invalid data refused, undeclared methods 405). Not "valid data
    # accepted": the sandbox's path rules (control characters, dot segments, length
    # per segment...) cannot be written in a schema, so a schema-valid path may be a 400.
    case.call_and_validate(
        base_url=base,
        timeout=30,
        excluded_checks=[schemathesis.checks.positive_data_acceptance],
    )


ESCAPES = [
    "../../../../outside/secret.md",
    "..%2F..%2F..%2F..%2Foutside%2Fsecret.md",
    "%2e%2e/%2e%2e/%2e%2e/%2e%2e/outside/secret.md",
    "/etc/passwd.md",
    "link/secret.md",
    "link/new.md",
    "../beside-the-vault.md",
    "../../readme.md",
    "..\\..\\readme.md",
    "~/x.md",
]


@pytest.mark.parametrize("path", ESCAPES)
def test_escapes_are_refused(fuzzed: tuple[RunningIndexer, Path], path: str) -> None:
    """Hand-picked escapes through every writing route (the fixture then checks that
    nothing outside the vaults changed)."""
    server, _ = fuzzed
    base = server.url.removesuffix("/mcp") + "/api/v1/en"
    url_path = path if "%" in path else quote(path, safe="/~")
    md = {"Content-Type": "text/markdown"}
    with httpx2.Client(base_url=base, timeout=30) as http:
        answers = [
            http.put(f"/notes/{url_path}", content=b"# pwned\n", headers=md),
            http.delete(f"/notes/{url_path}", headers={"X-Requested-With": "t"}),
            http.post("/append", json={"path": path, "content": "pwned\n"}),
            http.get(f"/raw/{url_path}"),
        ]
    for answer in answers:
        assert answer.status_code in (400, 403, 404), (answer.request.url, answer.text)
