"""``agent-client`` imports only what a command uses.

Every command imported fastmcp and the MCP SDK (1.4 s) and openai (0.6 s): ``--help``
took 3 s. The MCP client is needed once a session opens, the OpenAI SDK once a model
merge runs. Each command here runs in a fresh interpreter, as the ``agent-client``
script runs it, and says which of the SDKs it imported (a test's commands run at once).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers.indexer_process import RunningIndexer
from helpers.llm_stub import final, running_llm_stub, tool_call

SDKS = ("fastmcp", "mcp", "openai")

COMMAND = """
import json, sys
from agent_client.command import main
try:
    code = main(sys.argv[2:])
except SystemExit as exc:  # (argparse: --help, bad usage)
    code = exc.code
sdks = sys.argv[1].split(",")
print(json.dumps([code, sorted({name.split(".")[0] for name in sys.modules} & set(sdks))]))
"""


def start(command: list[str], **env: str) -> subprocess.Popen[str]:
    """``agent-client COMMAND`` started in a fresh interpreter (several run at once: each
    start is seconds of imports at load, and they need not wait on each other)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_CLIENT_", "VAULT_"))}
    args = [sys.executable, "-c", COMMAND, ",".join(SDKS), *command]
    return subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**base, **env}
    )


def result(process: subprocess.Popen[str]) -> tuple[int, list[str], list[str]]:
    """A started command's status, the SDKs it imported and the lines it printed before
    saying so."""
    out, err = process.communicate(timeout=120)
    *printed, last = out.splitlines() or [""]
    assert last.startswith("["), (process.args[3:], out, err)
    code, imported = json.loads(last)
    return code, imported, printed


def run_all(commands: list[list[str]], **env: str) -> list[tuple[int, list[str], list[str]]]:
    """Each of ``commands`` in its own fresh interpreter, all at once: ``result`` of
    each, in order."""
    started: list[subprocess.Popen[str]] = []
    try:
        for command in commands:
            started.append(start(command, **env))
        return [result(process) for process in started]
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
                process.communicate()


def test_commands_that_never_connect_import_no_sdk(tmp_path: Path) -> None:
    """Help, bad usage and an indexer that is not running: answered in a few tenths of
    a second (a model configured changes nothing: no merge runs)."""
    offline = ["--workspace", str(tmp_path), "--lang", "en"]
    model = {"VAULT_LLM_MODEL": "stub-model", "OPENAI_API_KEY": "unused"}
    cases = (
        (["--help"], 0),
        (["remember", "--help"], 0),
        (["search"], 2),
        (["history", "items/a.md", "--limit", "0", *offline], 2),
        (["search", *offline, "apple"], 3),
        (["event", *offline, "--title", "t", "x"], 3),
        (["remember", *offline, "--title", "t", "x"], 3),
    )
    done = run_all([command for command, _status in cases], **model)
    for (command, status), got in zip(cases, done, strict=True):
        assert got[:2] == (status, []), command


def test_a_server_without_a_model_never_imports_openai(server: RunningIndexer) -> None:
    """A deterministic merge (a model configured, ``--no-llm``), an event, a search."""
    ws = ["--workspace", str(server.workspace), "--lang", "en-startup"]
    model = {"VAULT_LLM_MODEL": "stub-model", "OPENAI_API_KEY": "unused"}
    commands = [
        ["remember", *ws, "--no-llm", "--title", "Apples", "an apple a day"],
        ["event", *ws, "--title", "Lunch", "ate an apple"],
        ["search", *ws, "apple"],
    ]
    for command, got in zip(commands, run_all(commands, **model), strict=True):
        assert got[:2] == (0, ["fastmcp", "mcp"]), command


def test_a_model_merge_imports_openai_and_merges(server: RunningIndexer) -> None:
    """The model's side, imported only when the merge begins, still merges."""
    note = "---\ntitle: Plums\n---\n# Plums\n\na plum is a fruit\n"
    with running_llm_stub() as stub:
        stub.run(
            [
                tool_call("write", path="items/plums.md", content=note),
                final(["items/plums.md"], "Created the note."),
            ]
        )
        command = ["remember", "--workspace", str(server.workspace), "--lang", "en-startup"]
        ((code, imported, printed),) = run_all(
            [[*command, "--json", "--title", "Plums", "a plum is a fruit"]],
            VAULT_LLM_MODEL="stub-model",
            OPENAI_BASE_URL=stub.base_url,
            OPENAI_API_KEY="unused",
        )
    assert (code, imported) == (0, ["fastmcp", "mcp", "openai"])
    notice = json.loads(printed[-1])
    assert notice["method"] == "llm" and notice["updated_files"] == ["items/plums.md"]


FIRST_CONNECT = """
import asyncio, json, sys, time
from pathlib import Path

from agent_client.connection import mcp_vault_connection
from agent_client.settings import ClientSettings


async def main() -> None:
    longest = 0.0

    async def tick() -> None:  # (a host's other work: a stream it is writing out)
        nonlocal longest
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            longest, last = max(longest, now - last), now

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.05)
    started = time.monotonic()
    async with mcp_vault_connection("en", ClientSettings(workspace=Path(sys.argv[1]))) as vault:
        await vault.stat("none.md")
    took = time.monotonic() - started
    ticker.cancel()
    print(json.dumps([took, longest, "fastmcp" in sys.modules]))


asyncio.run(main())
"""


def test_the_first_connection_imports_the_mcp_client_off_the_event_loop(
    server: RunningIndexer,
) -> None:
    """The MCP client is imported as the first session opens, inside the host's event
    loop: imported there, it froze the loop for as long as it took (1-2 s: an agent's
    streamed answer stopped at its first memory write). On a thread, the loop goes on."""
    args = [sys.executable, "-c", FIRST_CONNECT, str(server.workspace)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    took, longest, loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded and took > 0.3, (took, done.stderr)  # (the import's time was spent here)
    assert longest < took / 3, (longest, took)
