"""The REST routes that have the server's background jobs work now: a summaries pass, a
maintenance run and its state, a maintenance task's replace.

``indexer summarize`` and ``indexer maintain`` beside a running server call these: the
server owns history, so what its jobs write is recorded as theirs, and its own settings
and model do the work (a shell without ``INDEXER_LLM_*`` ran maintenance's no-model path
and recorded a success the server's scheduler then trusted). A run here never overlaps
the scheduler's: summaries take one pass at a time, maintenance a lock file per task.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from indexer.core import Core
from indexer.jobs.maintenance_tasks import ASKED_WAIT, TASKS, check_task, write_output
from indexer.web.params import (
    JSON_CAP_EXTRA,
    OPTIONAL_STR,
    REQUIRED,
    fields,
    json_body,
    precondition,
    quote_etag,
)
from shared.errors import NotFoundError
from shared.langs import check_lang

if TYPE_CHECKING:
    from indexer.jobs.maintenance import Maintenance

Endpoint = Callable[[Request], Any]


def job_routes(core: Core, json_cap: int) -> list[tuple[str, str, Endpoint]]:
    """(method, path, endpoint) of each job route; ``json_cap``: a note's JSON body's."""
    vault = core.vault

    def langs_of(lang: str | None) -> list[str] | None:
        """``[lang]`` when the body names a vault (that must exist), None: every vault."""
        if lang is None:
            return None
        checked = check_lang(lang)
        if checked not in vault.sandbox.workspace.langs():
            raise NotFoundError(f"there is no vault {checked!r}")
        return [checked]

    def maintenance_of() -> Maintenance:
        if core.maintenance is None or core.jobs is None:
            raise NotFoundError("maintenance is not available in this indexer (feature absent)")
        return core.maintenance()

    async def summarize(request: Request) -> Response:
        """A summaries pass now, on the jobs thread (``indexer summarize`` beside it)."""
        spec = {"lang": OPTIONAL_STR, "force": (bool, False)}
        body = fields(await json_body(request, JSON_CAP_EXTRA), spec)
        summaries, jobs = core.summaries, core.jobs
        if summaries is None or jobs is None:
            raise NotFoundError("directory summaries are off in this indexer (feature absent)")
        langs = langs_of(body["lang"])
        asked = summaries.asked_pass(langs, force=body["force"])
        stats = await asyncio.wrap_future(jobs.submit(asked))
        return JSONResponse(dataclasses.asdict(stats))

    async def maintain(request: Request) -> Response:
        """The enabled maintenance tasks asked for, run now on the jobs thread with this
        server's settings and model (``indexer maintain`` beside it); their outcomes."""
        spec = {"lang": OPTIONAL_STR, "task": OPTIONAL_STR, "force": (bool, False)}
        body = fields(await json_body(request, JSON_CAP_EXTRA), spec)
        maintenance = maintenance_of()
        langs = langs_of(body["lang"])
        wanted = [check_task(body["task"]).name] if body["task"] is not None else list(TASKS)
        enabled = [task for task in wanted if task in maintenance.settings.enabled]
        if not enabled:
            names = " / ".join(f"{TASKS[task].env}=1" for task in wanted)
            raise NotFoundError(
                "no maintenance task asked for is enabled in the running indexer (feature"
                f" absent): start it with {names} in its environment, or its flags"
            )
        run = maintenance.run_due(langs, enabled, force=body["force"], wait_up_to=ASKED_WAIT)
        assert core.jobs is not None  # (maintenance_of)
        outcomes = await asyncio.wrap_future(core.jobs.submit(run))
        outcomes_seen = [vars(o) for o in outcomes]
        return JSONResponse({"model": maintenance.model_name, "outcomes": outcomes_seen})

    async def maintenance_state(request: Request) -> Response:
        """Maintenance as this server sees it: its settings (enabled tasks, model), its
        state file, and per vault and task what it last did and whether it is due."""
        maintenance = maintenance_of()
        rows = await run_in_threadpool(maintenance.status)
        return JSONResponse(
            {
                "state": str(maintenance.state.path),
                "model": maintenance.model_name,
                "enabled": maintenance.enabled_tasks,
                "tasks": rows,
            }
        )

    async def maintenance_write(request: Request) -> Response:
        """A maintenance task's replace, written as the server's scheduler writes it
        (actor ``job:maintenance``, reason ``maintenance:<task>``)."""
        lang = request.path_params["lang"]
        spec = {"task": (str, REQUIRED), "content": (str, REQUIRED), "if_match": OPTIONAL_STR}
        body = fields(await json_body(request, json_cap), spec)
        if_match = precondition(request, body["if_match"])
        call = functools.partial(write_output, vault, lang, body["task"], body["content"], if_match)
        result = await run_in_threadpool(call)
        headers = {"ETag": quote_etag(result["etag"])}
        status = 201 if result["created"] else 200
        return JSONResponse(result, status_code=status, headers=headers)

    return [
        ("POST", "/summarize", summarize),
        ("GET", "/maintain", maintenance_state),
        ("POST", "/maintain", maintain),
        ("POST", "/{lang}/maintenance", maintenance_write),
    ]
