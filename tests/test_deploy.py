"""deploy/: env.example matches the settings the code knows; the service files are sound.

No Docker engine here, so the image is never built; instead the container's own
configuration (its ENV, ENTRYPOINT and HEALTHCHECK, and compose's environment) is run
against a real ``indexer serve`` on this machine.
"""

from __future__ import annotations

import http.client
import json
import os
import plistlib
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.indexer_process import QUIET_ENV, wait_for

from agent_client.settings import SETTINGS_HELP as CLIENT_SETTINGS
from indexer.cli import build_parser
from indexer.settings import SETTINGS_HELP as INDEXER_SETTINGS

REPO = Path(__file__).resolve().parent.parent
DEPLOY = REPO / "deploy"
UNIT = DEPLOY / "systemd" / "vault-memory.service"
PLIST = DEPLOY / "launchd" / "org.vault-memory.indexer.plist"
DOCKERFILE = DEPLOY / "docker" / "Dockerfile"
COMPOSE = DEPLOY / "docker" / "compose.yaml"
KNOWN = {**INDEXER_SETTINGS, **CLIENT_SETTINGS}


def env_example_sections() -> list[dict[str, tuple[str, str]]]:
    """Each ``# ---- title ----`` section of env.example as {VAR: (default, help)}."""
    sections: list[dict[str, tuple[str, str]]] = []
    help_line = ""
    for line in (DEPLOY / "env.example").read_text(encoding="utf-8").splitlines():
        if line.startswith("# ----"):
            sections.append({})
        elif line.startswith("# "):
            help_line = line[2:]
        elif "=" in line and not line.startswith("#"):
            key, default = line.split("=", 1)
            assert sections, f"{key} comes before any section header"
            assert key not in sections[-1], f"{key} listed twice"
            sections[-1][key] = (default, help_line)
            help_line = ""
    return sections


def test_env_example_lists_every_setting_with_default_and_help() -> None:
    indexer, client = env_example_sections()
    assert indexer == INDEXER_SETTINGS, "deploy/env.example differs from indexer.settings"
    assert client == CLIENT_SETTINGS, "deploy/env.example differs from agent_client.settings"


def unit_values() -> dict[str, list[str]]:
    values: dict[str, list[str]] = {}
    for line in UNIT.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            values.setdefault(key, []).append(value)
    return values


def serve_args(argv: list[str], home: str) -> dict[str, Any]:
    """Parse ``indexer serve ...`` (with the home folder filled in) with the real CLI parser."""
    filled = [arg.replace("%h", home).replace("__HOME__", home) for arg in argv]
    assert Path(filled[0]).name == "indexer", filled
    return vars(build_parser().parse_args(filled[1:]))


def test_systemd_unit_runs_serve_restarts_on_failure_and_logs_to_journald() -> None:
    values = unit_values()
    args = serve_args(shlex.split(values["ExecStart"][0]), "/home/me")
    assert args["command"] == "serve"
    assert args["workspace"].startswith("/home/me/")
    assert (args["host"], int(args["port"])) == ("127.0.0.1", 8765)  # (Settings checks it)
    assert values["Restart"] == ["on-failure"]
    assert values["StandardOutput"] == values["StandardError"] == ["journal"]
    assert values["KillSignal"] == ["SIGTERM"]
    assert values["WantedBy"] == ["default.target"]  # a user unit


def test_systemd_unit_verifies(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not found: the unit file check is optional")
    # verify checks that ExecStart's program exists: point it at this checkout's indexer.
    indexer = Path(sys.executable).with_name("indexer")
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text().replace("%h/.local/bin/indexer", str(indexer)))
    proc = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60
    )
    if "Failed to initialize manager" in proc.stderr:
        pytest.skip(f"systemd-analyze cannot run here: {proc.stderr.strip()}")
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr


def test_systemd_install_lines_keep_the_env_file_private(tmp_path: Path) -> None:
    """The unit's install steps for the settings file, run as written: the file may hold
    INDEXER_MCP_TOKEN, and a ``cp`` left it readable by every user of the machine (0644
    under the usual umask), while the indexer keeps its own token file 0600."""
    header = [line[1:].strip() for line in UNIT.read_text().splitlines() if line[:1] == "#"]
    steps = [line.split("  #")[0] for line in header if "~/.config/vault-memory" in line]
    assert any("env.example" in step for step in steps), steps
    home = tmp_path / "home"
    home.mkdir()
    subprocess.run(
        ["bash", "-ec", "umask 022\n" + "\n".join(steps)],
        cwd=REPO,
        env={"HOME": str(home), "PATH": os.environ.get("PATH", "")},
        check=True,
        timeout=30,
    )
    settings = home / ".config" / "vault-memory" / "env"
    assert settings.read_bytes() == (DEPLOY / "env.example").read_bytes()
    assert settings.stat().st_mode & 0o077 == 0, oct(settings.stat().st_mode)


def test_launchd_plist_runs_serve_and_restarts_on_failure() -> None:
    plist = plistlib.loads(PLIST.read_bytes())
    args = serve_args(plist["ProgramArguments"], "/Users/me")
    assert args["command"] == "serve" and args["workspace"] == "/Users/me/vault-memory"
    assert (args["host"], int(args["port"])) == ("127.0.0.1", 8765)  # (Settings checks it)
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["StandardErrorPath"].startswith("__HOME__/Library/Logs/")


def test_launchd_install_line_fills_in_any_home_folder(tmp_path: Path) -> None:
    """The plist's and the README's perl line, run as written: a home folder holding ``&``
    or ``<`` went into the XML as it was, and launchd could not load the file."""
    perl = shutil.which("perl")
    if perl is None:
        pytest.skip("perl not found (macOS always has it)")
    pattern = re.compile(r"perl -pe '([^']+)'\s+(?:\\\s+)?deploy/launchd/org\.vault-memory")
    programs = set(pattern.findall(PLIST.read_text(encoding="utf-8")))
    programs |= set(pattern.findall((REPO / "README.md").read_text(encoding="utf-8")))
    assert len(programs) == 1, f"the plist and the README give different lines: {programs}"
    home = "/Users/Ann & Bob <dev> #1 'q' é/$x\\1"
    filled = subprocess.run(
        [perl, "-pe", programs.pop(), str(PLIST)],
        capture_output=True,
        env={"HOME": home, "PATH": os.environ.get("PATH", "")},
        timeout=30,
        check=True,
    ).stdout
    plist = plistlib.loads(filled)
    assert plist["ProgramArguments"][0] == f"{home}/.local/bin/indexer"
    assert plist["StandardErrorPath"] == f"{home}/Library/Logs/vault-memory.log"


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text(encoding="utf-8"))
    pairs = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            instruction, _, rest = line.strip().partition(" ")
            pairs.append((instruction.upper(), rest.strip()))
    return pairs


def docker_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for instruction, rest in dockerfile():
        if instruction == "ENV":
            env.update(dict(pair.split("=", 1) for pair in shlex.split(rest)))
    return env


def docker_exec_form(name: str) -> list[str]:
    for instruction, rest in dockerfile():
        if instruction == name:
            rest = rest.split(" CMD ", 1)[-1] if name == "HEALTHCHECK" else rest
            form: list[str] = json.loads(rest)
            return form
    raise AssertionError(f"no {name} in the Dockerfile")


def test_dockerfile_is_slim_non_root_with_a_volume_and_a_healthcheck() -> None:
    pairs = dockerfile()
    instructions = [instruction for instruction, _ in pairs]
    assert re.fullmatch(r"python:3\.1[1-9]-slim(-\w+)?", dict(pairs)["FROM"])
    user = [rest for instruction, rest in pairs if instruction == "USER"][-1]
    assert user.split(":")[0] not in ("root", "0")
    assert instructions.index("USER") < instructions.index("ENTRYPOINT")
    assert json.loads(dict(pairs)["VOLUME"]) == ["/workspace"]
    env = docker_env()
    assert env["INDEXER_WORKSPACE"] == "/workspace"
    assert env["INDEXER_HOST"] == "0.0.0.0"  # Docker's port forwarding needs it
    assert dict(pairs)["EXPOSE"] == env["INDEXER_PORT"] == "8765"
    assert {key for key in env if key.startswith("INDEXER_")} <= set(INDEXER_SETTINGS)
    assert "/health" in " ".join(docker_exec_form("HEALTHCHECK"))
    for instruction, rest in pairs:
        if instruction == "COPY":
            for source in shlex.split(rest)[:-1]:
                assert (REPO / source).exists(), f"COPY {source}: not in the repository"


def test_dockerfile_lints_clean() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).with_name("hadolint"))
    if not Path(hadolint).exists():
        pytest.skip("hadolint not found: the Dockerfile lint is optional")
    proc = subprocess.run(
        [hadolint, "--no-color", "--failure-threshold", "info", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def compose_service() -> dict[str, Any]:
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    service: dict[str, Any] = compose["services"]["vault-memory"]
    return service


def test_compose_builds_this_dockerfile_and_publishes_on_loopback_only() -> None:
    service = compose_service()
    context = (COMPOSE.parent / service["build"]["context"]).resolve()
    assert context == REPO
    assert (context / service["build"]["dockerfile"]).resolve() == DOCKERFILE
    assert service["ports"] == ["127.0.0.1:8765:8765"]
    assert any(volume.endswith(":/workspace") for volume in service["volumes"])
    assert set(service["environment"]) <= set(INDEXER_SETTINGS)


def test_compose_hands_the_env_file_to_the_container_and_keeps_its_own_address() -> None:
    """env.example says to copy it to a .env for compose; compose reads that file only to
    fill in compose.yaml's ``${...}``, so without ``env_file`` a model or maintenance set
    there never reached the container. Copied whole, its loopback host, port 0 and empty
    workspace must not replace the image's: ``environment`` (over env_file) pins them."""
    example = (DEPLOY / "env.example").read_text(encoding="utf-8")
    assert "to a .env (compose: deploy/docker/.env)" in example
    service = compose_service()
    assert {"path": ".env", "required": False} in service["env_file"]
    image = docker_env()
    container = compose_container_env(env_file_values(DEPLOY / "env.example"))
    for key in ("INDEXER_WORKSPACE", "INDEXER_HOST", "INDEXER_PORT"):
        assert container[key] == image[key], f"a copied env.example replaces the image's {key}"


def env_file_values(path: Path) -> dict[str, str]:
    """An env file's ``KEY=value`` lines, as compose's env_file and systemd read them."""
    lines = path.read_text(encoding="utf-8").splitlines()
    pairs = [line.split("=", 1) for line in lines if "=" in line and not line.startswith("#")]
    return {key: value for key, value in pairs}


def compose_container_env(env_file: dict[str, str]) -> dict[str, str]:
    """The container's environment: the image's ENV, then the env file, then compose's
    ``environment`` (with nothing set in the shell)."""
    environment = compose_service()["environment"]
    return {**docker_env(), **env_file, **{k: compose_default(v) for k, v in environment.items()}}


def compose_default(value: object) -> str:
    """Compose's ``${VAR:-default}`` with nothing set: the default."""
    return re.sub(r"\$\{\w+(?::?-([^}]*))?\}", lambda m: m[1] or "", str(value))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def initialize_status(port: int, host: str) -> int:
    """HTTP status of an MCP initialize POST carrying ``Host: host``."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "deploy-test", "version": "1"},
            },
        }
    )
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "POST",
            "/mcp",
            body=body,
            headers={
                "Host": host,
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_container_configuration_serves_and_passes_its_healthcheck(tmp_path: Path) -> None:
    """ENTRYPOINT + ENV + the whole env.example as compose's .env + compose environment,
    with local paths and a free port."""
    port = free_port()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {
        **os.environ,
        **QUIET_ENV,
        **compose_container_env(env_file_values(DEPLOY / "env.example")),  # copied whole
        "INDEXER_WORKSPACE": str(workspace),
        "INDEXER_PORT": str(port),
        "INDEXER_PROMPTS_DIR": str(REPO / "prompts"),
        "INDEXER_MCP_TOKEN": secrets.token_urlsafe(16),  # it listens on 0.0.0.0 meanwhile
    }
    entrypoint = docker_exec_form("ENTRYPOINT")
    assert entrypoint[0] == "indexer"
    command = [sys.executable, "-m", "indexer", *entrypoint[1:]]
    log = tmp_path / "serve.log"
    with log.open("w") as log_file:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log_file)
    try:

        def ready() -> bool:
            assert proc.poll() is None, log.read_text()
            return (workspace / "indexer.mcp.url").exists()

        wait_for(ready, 30, what="the URL file")
        healthcheck = docker_exec_form("HEALTHCHECK")
        assert healthcheck[0] == "python"
        check = subprocess.run(
            [sys.executable, *healthcheck[1:]], env=env, capture_output=True, timeout=30
        )
        assert check.returncode == 0, check.stderr
        # Clients on the host (through the published port) use the URL file's loopback URL.
        url = (workspace / "indexer.mcp.url").read_text(encoding="utf-8").strip()
        assert url == f"http://127.0.0.1:{port}/mcp"
        # Past the Host check, the token check answers (401): the host's clients, then
        # compose neighbours (INDEXER_ALLOWED_HOSTS); any other Host is refused first (421).
        assert initialize_status(port, f"127.0.0.1:{port}") == 401
        assert initialize_status(port, f"vault-memory:{port}") == 401
        assert initialize_status(port, f"evil.example:{port}") == 421
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_skill_names_every_tool_and_error_code() -> None:
    """prompts/skills/vault-memory/SKILL.md: a skill header, and nothing left out."""
    from shared.errors import ERRORS_BY_CODE

    text = (REPO / "prompts" / "skills" / "vault-memory" / "SKILL.md").read_text("utf-8")
    _, header, body = text.split("---\n", 2)
    meta = yaml.safe_load(header)
    assert meta["name"] == "vault-memory" and len(meta["description"]) <= 1024
    tools = ["read", "write", "stat", "append", "find", "grep", "delete", "search", "status"]
    tools += ["recall", "summary", "history", "diff", "restore", "move", "undo"]
    for tool in tools:
        assert f"`{tool}(" in body, f"SKILL.md does not show how to call {tool}"
    for code in set(ERRORS_BY_CODE) - {"indexer_offline"}:
        assert f"| `{code}` |" in body, f"SKILL.md does not say what to do about {code}"
    assert "if_match" in body and "search" in body.split("## Tools")[0]
