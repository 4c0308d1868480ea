"""``indexer maintain``: run the maintenance tasks now, or show their state.

``indexer maintain --status`` is seed 002's troubleshooting view: per vault and task,
whether it is enabled, what it last did (``none|replace|skip|error``), when it last ran
and succeeded, the last error, and whether it is due now (and why not). Without
``--status`` the due tasks run (``--force``: whatever the digest and the interval say,
never a disabled task). Beside a running server, the server runs them, with its own
settings and model (a shell without a model ran the no-model path and recorded a
success its scheduler then trusted), recorded as its own job's; ``--status`` shows its
settings and state. Runs of one task never overlap (a lock file per task).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from indexer.cli import add_background_options, named_vault, resolve_workspace
from indexer.index.abstract import one_line
from indexer.jobs.maintenance import Maintenance, Outcome
from indexer.jobs.maintenance_tasks import ASKED_WAIT, TASKS
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.cli_usage import say_notice
from shared.errors import ConfigError, IndexerOfflineError, words_of
from shared.terminal_text import for_terminal
from shared.workspace import Workspace

if TYPE_CHECKING:
    from indexer.index.service import NoteIndex


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    maintain = commands.add_parser(
        "maintain",
        parents=[common],
        help="run the USER.md / PROJECT.md maintenance now, or show its state (--status)",
        description=(
            "Run the due maintenance tasks (USER.md, PROJECT.md distilled from events/ by "
            "the background model; without one, the entries tagged for each file are added "
            "to it), or print their state with --status. Tasks are enabled "
            "with INDEXER_MAINTENANCE_USER_PROFILE=1 / INDEXER_MAINTENANCE_PROJECT_REVIEW=1 "
            "or the flags below. While an indexer serves the workspace, it runs the tasks "
            "(and --status shows its state) with its own settings and model: this "
            "command's model and maintenance flags and environment are then not used."
        ),
    )
    maintain.add_argument("--lang", help="only this vault (default: every vault)")
    maintain.add_argument("--task", choices=sorted(TASKS), help="only this task")
    maintain.add_argument(
        "--force", action="store_true", help="run even if the inputs and interval say no"
    )
    maintain.add_argument("--status", action="store_true", help="print the state table only")
    maintain.add_argument("--json", action="store_true", help="print JSON")
    add_background_options(maintain)
    maintain.set_defaults(func=cmd_maintain)


def cmd_maintain(args: argparse.Namespace) -> int:
    from indexer.settings import Settings

    workspace = resolve_workspace(args, existing=True)
    try:
        settings = Settings.resolve({**vars(args), "workspace": str(workspace.root)}, os.environ)
    except ValueError as err:
        raise ConfigError(words_of(err)) from None
    langs = [named_vault(workspace, args.lang)] if args.lang is not None else None
    tasks = [args.task] if args.task else None
    if args.status:
        _status(settings, langs, tasks, args.json)
        return 0
    wanted = tasks or list(TASKS)
    from indexer.cli.index import lock_unless_served

    held = lock_unless_served(workspace)  # (held to the end: no server starts meanwhile)
    if held is None:
        outcomes = _on_server(workspace, langs, args.task, wanted, args.force)
    else:
        with held:
            enabled = _enabled(wanted, settings.maintenance.enabled, server=False)
            maintenance = _build(settings, served=False)
            outcomes = asyncio.run(_run(maintenance, langs, enabled, args.force))
    _print_outcomes(outcomes, args.json)
    held_back = any(o.action == "error" or o.retry_after is not None for o in outcomes)
    return 1 if held_back else 0


def _enabled(wanted: list[str], enabled: Collection[str], *, server: bool) -> list[str]:
    """The tasks of ``wanted`` that are enabled (in the running indexer's settings when
    ``server``); ``ConfigError`` saying how to enable them when none is."""
    found = [task for task in wanted if task in enabled]
    if found:
        return found
    names = " / ".join(f"{TASKS[task].env}=1" for task in wanted)
    if server:
        raise ConfigError(
            "no maintenance task is enabled in the running indexer (its settings run the"
            f" tasks, not this command's): start it with {names} (or its flags)"
        )
    raise ConfigError(f"no maintenance task is enabled: set {names} (or the flags)")


def _on_server(
    workspace: Workspace,
    langs: list[str] | None,
    task: str | None,
    wanted: list[str],
    force: bool,
) -> list[Outcome]:
    """The run by the server holding ``workspace``, with its settings and model (this
    shell's may have none: its no-model path then recorded a success the server's
    scheduler trusted), recorded as its own job's, never beside its scheduler's run."""
    from indexer.cli.remote import maintain_on_server, maintenance_state_on_server

    state = maintenance_state_on_server(workspace)
    if state is None:
        raise IndexerOfflineError(
            f"the indexer holding {workspace.root} does not answer; nothing run"
        )
    _enabled(wanted, state.get("enabled") or (), server=True)
    say_notice(
        "indexer maintain: the running indexer runs the tasks with its own settings and model"
        f" ({_model_text(state.get('model'))}); this command's are not used"
    )
    answer = maintain_on_server(workspace, langs[0] if langs else None, task, force)
    names = {field.name for field in dataclasses.fields(Outcome)}
    try:
        return [
            Outcome(**{key: value for key, value in item.items() if key in names})
            for item in answer["outcomes"]
        ]
    except (KeyError, TypeError, AttributeError):
        raise IndexerOfflineError("the indexer's answer to the run was not understood") from None


def _status(settings: Any, langs: list[str] | None, tasks: list[str] | None, as_json: bool) -> None:
    """The state table: the running server's (its settings: enabled, model) when one
    answers, else this command's (its flags and environment)."""
    from indexer.cli.index import server_holds_lock
    from indexer.cli.remote import maintenance_state_on_server

    served = server_holds_lock(settings.workspace)
    remote = maintenance_state_on_server(settings.workspace) if served else None
    if remote is not None:
        rows, path, model = remote.get("tasks") or [], str(remote.get("state")), remote.get("model")
    else:
        maintenance = _build(settings, served=served)  # the model is named, never called
        rows, path = maintenance.status(), str(maintenance.state.path)
        model = maintenance.model_name
        _close(maintenance)
    rows = [
        row
        for row in rows
        if (langs is None or row["lang"] in langs) and (tasks is None or row["task"] in tasks)
    ]
    _print_status(rows, path, model, as_json)
    if as_json:
        return
    if remote is not None:
        print("(enabled and model are the running indexer's own settings)")
    elif served:
        print(
            "(the running indexer did not answer: enabled and model are this command's"
            " settings, its flags and environment; the indexer's own may differ)"
        )


def _build(settings: Any, *, served: bool) -> Maintenance:
    """A Maintenance over the vaults, with the index for the model's ``search``.

    With no server running (``served`` False: the caller holds the workspace lock), the
    index is brought up to date with disk first, or built (a workspace never served has
    none: the model was offered no ``search``), as ``indexer search`` does, and history
    records the command's writes and what the reconcile finds changed. Beside a server
    (which owns the index and history), the index is read as it is, for the state
    table, whose model is named, never called.
    """
    from indexer.jobs.llm import JobModel
    from indexer.wiring import build_maintenance, build_vault, open_history

    model = JobModel(settings.model) if settings.model is not None else None
    if served:
        vault = Vault(Sandbox(settings.workspace), max_file_bytes=settings.max_file_bytes)
        return build_maintenance(settings, vault, _read_only_index(settings.workspace), model)
    vault = build_vault(settings, open_history(settings))
    return build_maintenance(settings, vault, _current_index(settings.workspace, vault), model)


def _read_only_index(workspace: Workspace) -> NoteIndex | None:
    """The index file as it is; None when there is none (or of another schema)."""
    from indexer.index.service import NoteIndex

    index = NoteIndex(workspace)
    try:
        index.open(readonly=True)
    except Exception:  # no index yet, or another schema: the model just has no search
        index.close()
        return None
    return index


def _current_index(workspace: Workspace, vault: Vault) -> NoteIndex | None:
    """The index reconciled with disk (built when missing), what it finds changed
    recorded in ``vault``'s history; else the file as it is (a newer schema, a
    read-only workspace), warned of."""
    from indexer.index.service import NoteIndex
    from indexer.wiring import record_outside_changes

    index = NoteIndex(workspace)
    record_outside_changes(index, vault)
    try:
        index.open()
        index.reconcile()
    except Exception as exc:  # (the run goes on: the model's search reads what there is)
        index.close()
        say_notice(f"indexer maintain: the index was not brought up to date: {words_of(exc)}")
        return _read_only_index(workspace)
    return index


async def _run(
    maintenance: Maintenance, langs: list[str] | None, tasks: list[str], force: bool
) -> list[Outcome]:
    try:
        return await maintenance.run_due(langs, tasks, force=force, wait_up_to=ASKED_WAIT)
    finally:
        if maintenance.model is not None:
            await maintenance.model.close()
        _close(maintenance)


def _close(maintenance: Maintenance) -> None:
    """Close the index and history the command opened (the model: ``_run``)."""
    if maintenance.index is not None:
        maintenance.index.close()
    history = maintenance.vault.recorder.store
    if history is not None:
        history.close()


def _print_outcomes(outcomes: list[Outcome], as_json: bool) -> None:
    if as_json:
        print(json.dumps([vars(o) for o in outcomes], ensure_ascii=False, indent=2))
        return
    for o in outcomes:
        line = f"{o.lang} {o.task}: {o.action} ({one_line(o.reason)})"
        print(line + (f": {one_line(o.error)}" if o.error else ""))


def _model_text(model: object) -> str:
    return f"model: {model}" if model else "model: none: the tagged entries are added"


def _print_status(rows: list[dict], state: str, model: str | None, as_json: bool) -> None:
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    print(f"state: {state}")
    print(for_terminal(_model_text(model), sys.stdout))  # (the server's setting, as set)
    if not rows:
        print("no vaults yet")
        return
    columns = ("lang", "task", "enabled", "last_action", "last_run", "last_success", "due")
    table = [
        [
            str(row["lang"]),
            str(row["task"]),
            "yes" if row["enabled"] else "no",
            row["last_action"] or "-",
            row["last_run"] or "never",
            row["last_success"] or "never",
            "yes" if row["due"] else "no",
        ]
        for row in rows
    ]
    widths = [max(len(c), *(len(r[i]) for r in table)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    for row, cells in zip(rows, table, strict=True):
        print("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
        print(f"    now: {one_line(str(row['why']))}")  # the state file's texts: no escapes
        if row["reason"]:
            print(f"    reason: {one_line(str(row['reason']))}")
        if row["last_error"]:
            print(f"    last error: {one_line(str(row['last_error']))}")
