"""Asking the running indexer instead of using its files: ``indexer search`` while a
server holds the workspace, the runs of ``indexer maintain`` and the pass of ``indexer
summarize`` (the server owns the history store: its jobs' writes are recorded as theirs,
not as outside edits; its own settings and model do the work; and its own runs of a job
never overlap another).

The server indexes a note's appends in the background and before any read of its own,
so the index file can lag behind what the server has answered (at least 0.2 s, at most
10 s). Read-only, the CLI would miss those appends; the server's REST API does not. With
no server answering (or a busy one), the caller reads the index file as before.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from http import HTTPStatus
from urllib.parse import quote, urlencode

from indexer.health import base_url, open_local, server_health
from shared.errors import ERRORS_BY_CODE, IndexerOfflineError, OperationalError, VaultError
from shared.workspace import Workspace, read_token_file, read_url_file

TIMEOUT_SECONDS = 30.0
PASS_TIMEOUT_SECONDS = 24 * 3600.0  # a summaries pass by a slow model over a large vault


def search_on_server(
    workspace: Workspace,
    lang: str,
    query: str,
    *,
    limit: int,
    type: str | None,
    tags: list[str] | None,
    path: str,
    offset: int,
) -> dict | None:
    """The running server's ``search`` result; None when no server answers (or it is
    busy); its refusal as the typed ``VaultError`` it names."""
    server = _answering_server(workspace)
    if server is None:
        return None
    base, auth = server
    params: list[tuple[str, str]] = [("q", query), ("limit", str(limit)), ("offset", str(offset))]
    if type is not None:
        params.append(("type", type))
    params += [("tag", tag) for tag in tags or ()]
    if path:
        params.append(("path", path))
    request = urllib.request.Request(
        f"{base}/api/v1/{quote(lang, safe='')}/search?{urlencode(params)}", headers=auth
    )
    try:
        with open_local(request, TIMEOUT_SECONDS) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as err:
        refusal = _refusal(err)
        if refusal is None:  # busy, unauthorized, failed: the index file can still answer
            return None
        raise refusal from None
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) and "results" in answer else None


def maintain_on_server(
    workspace: Workspace, lang: str | None, task: str | None, force: bool
) -> dict:
    """The running server's maintenance run, with its own settings and model (recorded
    as its own job's; a task's lock file keeps it from overlapping its scheduler's run):
    ``{"model", "outcomes"}``. Its refusal as the typed ``VaultError`` it names
    (``not_found``: no task asked for is enabled there), ``IndexerOfflineError`` when it
    does not answer."""
    body = {"lang": lang, "task": task, "force": force}
    return _send(workspace, "POST", "/maintain", body, PASS_TIMEOUT_SECONDS, "run", "nothing run")


def maintenance_state_on_server(workspace: Workspace) -> dict | None:
    """The running server's maintenance settings and state (``GET /api/v1/maintain``);
    None when it does not answer (``OperationalError`` when it refuses the token)."""
    try:
        return _send(workspace, "GET", "/maintain", None, TIMEOUT_SECONDS, "question", "")
    except IndexerOfflineError:
        return None


def summarize_on_server(workspace: Workspace, lang: str | None, force: bool) -> dict:
    """A summaries pass run by the running server (its writes recorded as its job's),
    what it did as the pass's counts; refusals as for ``maintain_on_server`` (``not_found``:
    its summaries are off)."""
    body = {"lang": lang, "force": force}
    return _send(workspace, "POST", "/summarize", body, PASS_TIMEOUT_SECONDS, "pass", "")


def _send(
    workspace: Workspace,
    method: str,
    route: str,
    body: dict | None,
    timeout: float,
    what: str,
    outcome: str,
) -> dict:
    """``body`` as JSON (None: no body) to ``route`` of the running server's API: its
    JSON answer."""
    server = _answering_server(workspace)
    if server is None:
        raise IndexerOfflineError(  # stopped meanwhile, or its URL file is not its own
            f"the indexer holding {workspace.root} does not answer at the address in "
            f"{workspace.url_file.name}" + (f"; {outcome}" if outcome else "")
        )
    base, auth = server
    typed = {"Content-Type": "application/json"} if body is not None else {}
    request = urllib.request.Request(
        f"{base}/api/v1{route}",
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={**typed, **auth},
    )
    try:
        with open_local(request, timeout) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as err:
        if err.code == HTTPStatus.UNAUTHORIZED:  # it answers: "does not answer" misled
            raise OperationalError(
                f"the indexer holding {workspace.root} refused the token in "
                f"{workspace.token_file} (changed since it started?): restart it to write "
                "its token there again" + (f"; {outcome}" if outcome else "")
            ) from None
        raise _refusal(err) or IndexerOfflineError(f"the indexer answered {err.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise IndexerOfflineError(f"the indexer did not answer the {what}: {err}") from None
    if not isinstance(answer, dict):
        raise IndexerOfflineError(f"the indexer's answer to the {what} was not understood")
    return answer


def _answering_server(workspace: Workspace) -> tuple[str, dict[str, str]] | None:
    """The base URL of the indexer serving ``workspace`` and the headers that let a
    request in; None when its files cannot be read or nothing of this workspace answers."""
    try:
        url = read_url_file(workspace.url_file)
        token = read_token_file(workspace.token_file)
    except OSError:
        return None
    if url is None or server_health(url, workspace) is None:  # none, or another's
        return None
    return base_url(url), ({"Authorization": f"Bearer {token}"} if token else {})


def _refusal(err: urllib.error.HTTPError) -> VaultError | None:
    """The query's own refusal (invalid_argument, invalid_lang...), else None."""
    try:
        error = json.loads(err.read())["error"]
        cls = ERRORS_BY_CODE.get(error["code"])
        return cls(str(error["message"])) if cls is not None else None
    except (OSError, ValueError, KeyError, TypeError):
        return None
