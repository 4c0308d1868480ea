"""Every command and flag the README names exists in the commands' real parsers: a new
user copies them from there (the Quick start, the agent-client table, the settings
table, the lines in prose), and a renamed flag would answer "unrecognized arguments"
while the README went on naming the old one. The commands' lines are run as written in
``test_readme_commands_e2e``."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pytest

from agent_client.cli import build_parser as agent_client_parser
from indexer.cli import build_parser as indexer_parser
from indexer.cli.client_config import config_snippet

README = Path(__file__).resolve().parent.parent / "README.md"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# A command, then its arguments up to the end of the code span, table cell, parenthesis
# or shell comment that holds it.
COMMAND = re.compile(r"(?<![\w-])(indexer|agent-client) ([a-z][a-z-]*)\b(?![\w-])([^`|)#\n]*)")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    """Each subcommand's option strings (``--help`` included)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {
                name: {flag for act in sub._actions for flag in act.option_strings}
                for name, sub in action.choices.items()
            }
    raise AssertionError(f"{parser.prog} has no subcommands")


PROGRAMS = {
    "indexer": subcommands(indexer_parser()),
    "agent-client": subcommands(agent_client_parser()),
}


def section(title: str) -> str:
    return README.read_text(encoding="utf-8").split(f"\n## {title}\n")[1].split("\n## ")[0]


def named_in_prose() -> list[tuple[str, str, list[str]]]:
    """(program, subcommand, flags) of each ``indexer X ...``/``agent-client X ...`` the
    README writes, in code blocks and in running text alike."""
    found = []
    for match in COMMAND.finditer(README.read_text(encoding="utf-8")):
        program, command, rest = match.groups()
        if command in PROGRAMS[program] or rest.strip().startswith("-"):
            found.append((program, command, FLAG.findall(rest)))
    return found


def named_in_the_agent_client_table() -> list[tuple[str, str, list[str]]]:
    """The table's rows are ``| `remember --title T [--tag TAG] ...` | does |``."""
    rows = re.findall(r"^\| `([a-z]+)([^`]*)` \|", section("The agent-client command"), re.M)
    assert len(rows) >= 9, rows
    return [("agent-client", command, FLAG.findall(rest)) for command, rest in rows]


def named_in_the_settings_table() -> list[tuple[str, str, list[str]]]:
    """The flag column: an ``INDEXER_`` setting's flag is ``indexer serve``'s, an
    ``AGENT_CLIENT_`` one's is every agent-client command's (``remember`` stands for them)."""
    found = []
    for variables, flags in re.findall(
        r"^\| (`[A-Z].*?) \| (.*?) \|", section("Configuration"), re.M
    ):
        if FLAG.search(flags):
            program, command = (
                ("indexer", "serve") if "INDEXER_" in variables else ("agent-client", "remember")
            )
            found.append((program, command, FLAG.findall(flags)))
    assert len(found) >= 6, found
    return found


def test_the_readme_names_commands_and_flags_that_exist() -> None:
    named = named_in_prose() + named_in_the_agent_client_table() + named_in_the_settings_table()
    assert len(named) > 30, named  # (the patterns still find the README's commands)
    missing = []
    for program, command, flags in named:
        options = PROGRAMS[program].get(command)
        if options is None:
            missing.append(f"{program} {command}: no such command")
            continue
        missing += [f"{program} {command} {flag}" for flag in flags if flag not in options]
    assert sorted(set(missing)) == []


@pytest.mark.parametrize(
    "text",
    ["`indexer serve --workspace W --prot 8765`", "`indexer srve --workspace W`"],
)
def test_a_misspelled_command_or_flag_would_be_found(
    text: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The check itself: a README naming a flag or command that is not there fails it."""
    readme = tmp_path / "README.md"
    readme.write_text(README.read_text(encoding="utf-8") + f"\n{text}\n", encoding="utf-8")
    monkeypatch.setattr(sys.modules[__name__], "README", readme)
    with pytest.raises(AssertionError):
        test_the_readme_names_commands_and_flags_that_exist()


@pytest.mark.parametrize(
    ("client", "after"), [("claude", "**Claude Desktop**"), ("cursor", "**Cursor**")]
)
def test_the_readme_client_entries_are_what_config_snippet_prints(client: str, after: str) -> None:
    """The README's Claude Desktop and Cursor JSON, pasted by a reader who skips the
    command, is the entry ``indexer config-snippet`` prints for a server on port 8765
    with a token (the mcp-remote pin and the header's spelling included)."""
    text = section("Connecting clients").split(after, 1)[1]
    block = re.search(r"```json\n(.*?)```", text, re.S)
    assert block, f"no JSON block after {after}"
    printed = config_snippet(client, "http://127.0.0.1:8765/mcp", "<token>")
    assert json.loads(block.group(1)) == json.loads(printed)


def test_the_readme_pins_the_node_clients_the_tests_run() -> None:
    """The Inspector and mcp-remote versions the README gives are the ones the interop
    tests install (an unpinned or older Inspector takes no ``--header`` for a URL)."""
    pins = json.loads((README.parent / "tests/interop/package.json").read_text())
    pinned = {**pins.get("dependencies", {}), **pins.get("devDependencies", {})}
    text = README.read_text(encoding="utf-8")
    for package in ("@modelcontextprotocol/inspector", "mcp-remote"):
        named = set(re.findall(rf"{re.escape(package)}@([0-9][0-9.]*[0-9])", text))
        assert named == {pinned[package]}, (package, named, pinned[package])
