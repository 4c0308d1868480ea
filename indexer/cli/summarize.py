"""``indexer summarize``: bring every folder's summary (``.overview.md``) up to date now.

The same pass the server runs in the background: folders whose children did not change
are skipped (no model call, no write) unless ``--force``. Without a server the index is
first brought up to date with disk (the summaries read notes from it), and history
records what that finds changed and each summary written. While a server runs, it runs
the pass (with its own model settings): written here, its summaries were recorded as
another program's edits, with no reason, and the server's own pass could write the same
folder at once; if its summaries are off, the pass runs here on a read-only index.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import os
import sys
from typing import Any

from indexer.cli import add_model_options, named_vault, resolve_workspace
from indexer.cli.index import lock_unless_served, progress_display
from indexer.index.service import NoteIndex
from indexer.jobs.llm import JobModel
from indexer.jobs.summaries import Summaries
from indexer.jobs.summary_pass import UNREADABLE_SAMPLE, PassStats, Progress
from indexer.settings import Settings
from indexer.vault.sandbox import Sandbox
from shared.cli_usage import say_notice
from shared.errors import ConfigError, IndexerOfflineError, NotFoundError, words_of
from shared.terminal_text import for_terminal
from shared.workspace import Workspace


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    summarize = commands.add_parser(
        "summarize",
        parents=[common],
        help="make or refresh the summary (.overview.md) of every folder of the vaults",
        description=(
            "Summarize every folder of the vaults bottom-up, each from its notes' and "
            "subfolders' abstracts: by the background model when one is set, else by a "
            "deterministic fallback. Unchanged folders are skipped."
        ),
    )
    summarize.add_argument("--lang", help="only this vault (e.g. en, ja, zh-Hans)")
    summarize.add_argument("--force", action="store_true", help="redo every folder, changed or not")
    add_model_options(summarize)
    summarize.set_defaults(func=cmd_summarize)


def cmd_summarize(args: argparse.Namespace) -> int:
    workspace = resolve_workspace(args, existing=True)
    try:
        settings = Settings.resolve({**vars(args), "workspace": str(workspace.root)}, os.environ)
    except ValueError as err:
        raise ConfigError(words_of(err)) from None
    langs = None
    if args.lang is not None:  # "" is a bad lang, not "every vault"
        langs = [named_vault(workspace, args.lang)]
    held = lock_unless_served(workspace)  # (held to the end: no server starts meanwhile)
    served = held is None
    if served:
        asked = _on_server(workspace, langs, args.force)
        if asked is not None:
            return _report(asked, served=True)
    index = NoteIndex(workspace)
    try:
        with contextlib.ExitStack() as stack:
            if held is not None:
                stack.enter_context(held)
            recorder = None
            if served:  # (its watcher records the summaries written here)
                index.open(readonly=True)
            else:  # history records the edits the reconcile finds, and each summary
                from indexer.wiring import history_hearing

                vault = stack.enter_context(history_hearing(settings, index))
                recorder = vault.recorder if vault is not None else None
                index.open()
                index.reconcile()
            summaries = Summaries(
                Sandbox(workspace),
                index=index,
                model=JobModel(settings.model) if settings.model is not None else None,
                max_children=settings.summaries_max_children,
                written=None if served else index.note_changed,
                recorder=recorder,
            )
            line = "{done}/{total} folders looked at"
            with progress_display(sys.stderr, "summarizing folders", "summarize", line) as show:
                stats = asyncio.run(_run(summaries, langs, args.force, show))
    finally:
        index.close()
    return _report(stats, served=False)


def _on_server(workspace: Workspace, langs: list[str] | None, force: bool) -> PassStats | None:
    """The pass run by the server holding ``workspace`` (its writes recorded as its own
    job's, never beside its background pass); None when its summaries are off."""
    from indexer.cli.remote import summarize_on_server

    say_notice("indexer summarize: the running indexer summarizes the folders")
    try:
        answer = summarize_on_server(workspace, langs[0] if langs else None, force)
    except NotFoundError:
        return None  # (summaries off there: this command writes them, read-only index)
    except IndexerOfflineError as err:  # (it holds the workspace but does not answer)
        say_notice(f"indexer summarize: {err}; the folders are summarized here")
        return None
    names = {field.name for field in dataclasses.fields(PassStats)}
    counts = {key: value for key, value in answer.items() if key in names}
    sample = counts.get("unreadable_sample")  # (an older server's answer has none)
    if not (isinstance(sample, list) and all(isinstance(name, str) for name in sample)):
        counts.pop("unreadable_sample", None)
    try:
        return PassStats(**counts)
    except TypeError:
        raise IndexerOfflineError("the indexer's answer to the pass was not understood") from None


def _report(stats: PassStats, *, served: bool) -> int:
    """The table, and what it does not say."""
    print(table(stats))
    if served:
        print("(by the running indexer, with its own model settings)")
    if stats.noteless:  # (the progress counted them: it said 22/22, the table 18)
        print(f"{stats.noteless} folder(s) hold no note: no summary")
    if stats.unreadable:
        print(for_terminal(_unreadable_line(stats), sys.stdout))
    if stats.model_errors:  # (a forced pass keeps a model's summary rather than fall back)
        print(
            f"the model failed {stats.model_errors} time(s): {stats.fallback} folder(s) got"
            " the fallback summary; a folder the model had summarized keeps that summary"
        )
    return 0


def _unreadable_line(stats: PassStats) -> str:
    """How many notes were left out, and which (the first few, quoted as ``status``
    quotes the files it names: a name's control and direction characters escaped)."""
    shown = stats.unreadable_sample[:UNREADABLE_SAMPLE]
    names = ", ".join(repr(name) for name in shown)
    more = stats.unreadable - len(shown)
    if names and more > 0:
        names += f" and {more} more"
    which = f": {names}" if names else ""
    return f"{stats.unreadable} note(s) could not be read and were left out{which} (see the log)"


async def _run(
    summaries: Summaries, langs: list[str] | None, force: bool, progress: Progress
) -> PassStats:
    try:
        return await summaries.run_pass(langs, force=force, progress=progress)
    finally:
        if summaries.model is not None:
            await summaries.model.close()


def table(stats: PassStats) -> str:
    """The final table: folders done, by model, by fallback, skipped, removed, seconds."""
    heads = ("folders", "by model", "by fallback", "skipped", "removed", "seconds")
    values = (
        str(stats.folders),
        str(stats.llm),
        str(stats.fallback),
        str(stats.skipped),
        str(stats.removed),
        f"{stats.seconds:.1f}",
    )
    widths = [max(len(h), len(v)) for h, v in zip(heads, values, strict=True)]
    return "\n".join(
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in (heads, values)
    )
