"""``indexer maintain``: run the maintenance tasks now, or show their state.

``indexer maintain --status`` is seed 002's troubleshooting view: per vault and task,
whether it is enabled, what it last did (``none|replace|skip|error``), when it last ran
and succeeded, the last error, and whether it is due now (and why not). Without
``--status`` the due tasks run (``--force``: whatever the digest and the interval say,
never a disabled task). It works with or without a running server: runs of one task
never overlap (a lock file per task), and the server's watcher indexes what it writes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
from typing import Any

from indexer.cli import add_background_options, resolve_workspace
from indexer.index.abstract import one_line
from indexer.jobs.maintenance import Maintenance, Outcome
from indexer.jobs.maintenance_tasks import TASKS
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.errors import ConfigError, NotFoundError, words_of
from shared.langs import check_lang

# A model endpoint's Retry-After up to this long is waited out, and the task tried once
# more; a longer one ends the command, naming the moment to try again.
MAX_WAIT = 30.0


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
            "or the flags below."
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
    langs = [check_lang(args.lang)] if args.lang is not None else None
    if langs and langs[0] not in workspace.langs():
        raise NotFoundError(f"there is no vault {langs[0]!r} in {workspace.root}")
    tasks = [args.task] if args.task else None
    if args.status:
        maintenance = _build(settings)  # the model is named, never called
        rows = [
            row
            for row in maintenance.status()
            if (langs is None or row["lang"] in langs) and (tasks is None or row["task"] in tasks)
        ]
        _print_status(rows, maintenance, args.json)
        from indexer.cli.index import server_holds_lock

        if not args.json and server_holds_lock(workspace):
            print(
                "(enabled and model are this command's settings, its flags and environment;"
                " the running indexer's own may differ)"
            )
        return 0
    wanted = tasks or list(TASKS)
    enabled = [t for t in wanted if t in settings.maintenance.enabled]
    if not enabled:
        names = " / ".join(f"{TASKS[t].env}=1" for t in wanted)
        raise ConfigError(f"no maintenance task is enabled: set {names} (or the flags)")
    from indexer.cli.index import lock_unless_served

    held = lock_unless_served(workspace)  # (held to the end: no server starts meanwhile)
    with held or contextlib.nullcontext():
        maintenance = _build(settings, served=held is None)
        outcomes = asyncio.run(_run(maintenance, langs, enabled, args.force))
    _print_outcomes(outcomes, args.json)
    held_back = any(o.action == "error" or o.retry_after is not None for o in outcomes)
    return 1 if held_back else 0


def _build(settings: Any, *, served: bool | None = None) -> Maintenance:
    """A Maintenance over the vaults, with the index read-only (for the model's search).

    With no server running, its writes are recorded in history here; a running server
    owns the history store, so they go through it (``remote.maintenance_on_server``),
    recorded there as its own scheduler's. ``served``: whether a server runs, when the
    caller knows (it holds the workspace lock otherwise).
    """
    from indexer.cli.index import server_holds_lock
    from indexer.cli.remote import maintenance_on_server
    from indexer.index.service import NoteIndex
    from indexer.jobs.llm import JobModel
    from indexer.wiring import build_maintenance, build_vault, open_history

    index: NoteIndex | None = NoteIndex(settings.workspace)
    assert index is not None
    try:
        index.open(readonly=True)
    except Exception:  # no index yet, or another schema: the model just has no search
        index.close()
        index = None
    model = JobModel(settings.model) if settings.model is not None else None
    if served if served is not None else server_holds_lock(settings.workspace):
        vault = Vault(Sandbox(settings.workspace), max_file_bytes=settings.max_file_bytes)
        write = functools.partial(maintenance_on_server, settings.workspace)
        return build_maintenance(settings, vault, index, model, write=write)
    return build_maintenance(settings, build_vault(settings, open_history(settings)), index, model)


async def _run(
    maintenance: Maintenance, langs: list[str] | None, tasks: list[str], force: bool
) -> list[Outcome]:
    try:
        return await maintenance.run_due(langs, tasks, force=force, wait_up_to=MAX_WAIT)
    finally:
        if maintenance.model is not None:
            await maintenance.model.close()
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


def _print_status(rows: list[dict], maintenance: Maintenance, as_json: bool) -> None:
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    print(f"state: {maintenance.state.path}")
    model = maintenance.model.name if maintenance.model else "none: the tagged entries are added"
    print(f"model: {model}")
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
