"""Seed 002's background maintenance: ``USER.md`` and ``PROJECT.md`` distilled from events.

Two tasks per vault, both off by default: ``user_profile`` keeps ``USER.md`` (the
person: preferences, level, habits) and ``project_review`` keeps ``PROJECT.md`` (goals,
active threads, decisions). A task is **due** only when all three of seed 002's
conditions hold: it is enabled; the digest of the vault's ``events/`` files changed
since its last success; ``min_interval_hours`` passed since that success. ``force``
skips the last two, never the first. Without a model nothing is ever called: a run takes
its deterministic path (``maintenance_extract``: the entries tagged for the file are
added to it, a line each).

A run with a model builds the prompt (``maintenance_input``), lets the model read the vault through
the bounded read-only tool loop (``model_tools``) and takes its final answer only if it
is exactly ``{"action": "none", "reason"}`` or ``{"action": "replace", "reason",
"content"}``; anything else is an error and nothing is written. A replace is a normal
note write (frontmatter normalized, ``id``/``created`` kept, the index told) with
``reason="maintenance:<task>"`` (``maintenance_tasks``: the same wherever it runs),
guarded by the etag read when the prompt was built; a credential the model wrote into it
is redacted first (``secrets``).
A failed run leaves ``last_success``/``last_digest`` as they were, so it is retried
when next due. What happened is recorded in ``maintenance_state``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.index.abstract import one_line
from indexer.jobs.llm import ModelError
from indexer.jobs.maintenance_answer import Answer, AnswerError, parse_answer
from indexer.jobs.maintenance_extract import MAX_SECTIONS, Extracted, extracted
from indexer.jobs.maintenance_input import (
    EMPTY_EVENT_LOG,
    InputDigests,
    build_messages,
    event_sections,
    newest_entries,
)
from indexer.jobs.maintenance_output import (
    too_long,
    without_foreign_keys,
)
from indexer.jobs.maintenance_state import StateFile, TaskState, parse_time
from indexer.jobs.maintenance_tasks import (
    TASKS,
    MaintenanceSettings,
    OutputWriter,
    enabled_tasks,
    write_output,
)
from indexer.jobs.model_tools import LoopError, ReadOnlyTools, run_tool_loop
from indexer.jobs.quoted_modes import distilled_mode
from indexer.jobs.secrets import redact_secrets
from indexer.vault import fsops
from shared.control_chars import without_controls
from shared.errors import ForbiddenPathError, InvalidFrontmatterError, NotFoundError, VaultError
from shared.frontmatter import normalize_frontmatter_text, parse_frontmatter, render_note
from shared.graphemes import cut_chars
from shared.retry_after import quiet_end
from shared.timestamps import format_timestamp

if TYPE_CHECKING:
    from indexer.index.service import NoteIndex
    from indexer.jobs.llm import JobModel
    from indexer.vault.vault import Vault

log = logging.getLogger("indexer.jobs")
Clock = Callable[[], datetime]
MAX_ERROR_CHARS = 500


@dataclass(frozen=True)
class Decision:
    """Whether a task is due now, and why (not)."""

    due: bool
    reason: str
    digest: str | None = None
    # False: nothing worth writing to the state (disabled; the backoff after a failure,
    # whose error the state keeps showing)
    recorded: bool = True
    retry_after: float | None = None  # not due until the endpoint's Retry-After is over


@dataclass(frozen=True)
class Outcome:
    """What one task did for one vault."""

    lang: str
    task: str
    action: str  # none | replace | skip | error
    reason: str
    error: str | None = None
    model_down: bool = False  # the model gave no answer at all (``ModelError.down``)
    retry_after: float | None = None  # seconds until the endpoint may be asked again


class InputError(ValueError):
    """The task's input cannot be shown to the model as it is."""


class Maintenance:
    """The maintenance tasks of one workspace's vaults."""

    def __init__(
        self,
        settings: MaintenanceSettings,
        *,
        state: StateFile,
        vault: Vault,
        index: NoteIndex | None,
        model: JobModel | None,
        prompts_dir: Path,
        clock: Clock | None = None,
        write: OutputWriter | None = None,
    ) -> None:
        """``write``: how a replace is written (``maintenance_tasks``); by default
        through ``vault``."""
        self.settings = settings
        self.write: OutputWriter = write or functools.partial(write_output, vault)
        self.state = state
        self.vault = vault
        self.index = index
        self.model = model
        self.prompts_dir = prompts_dir
        self.clock: Clock = clock or (lambda: datetime.now(UTC))
        self.digests = InputDigests(vault)

    @property
    def enabled_tasks(self) -> list[str]:
        return enabled_tasks(self.settings)

    @property
    def model_name(self) -> str | None:
        """The model the tasks ask (None: the deterministic path), as the status names it."""
        return self.model.name if self.model is not None else None

    def langs(self) -> list[str]:
        return self.vault.sandbox.workspace.langs()

    # -- due rules -------------------------------------------------------------------------

    def check(
        self, lang: str, task: str, *, force: bool = False, backoff: bool = False
    ) -> Decision:
        """Seed 002's three conditions (``force`` skips the digest and the interval).

        ``backoff`` (the scheduler's): a failed run is retried no sooner than the shorter
        of the interval and an hour after it failed. It holds while ``last_error`` does
        (until a run succeeds), whatever was recorded between: it once keyed on
        ``last_action``, which the first check's recorded skip overwrote, so every other
        check ran a failing model again.
        """
        if task not in self.settings.enabled:
            return Decision(False, f"disabled (set {TASKS[task].env}=1)", recorded=False)
        output = TASKS[task].output
        if self._read_only(lang, output):  # (else the model's answer could not be written)
            return Decision(False, f"{output} is read-only: left as it is (forced runs too)")
        digest = self.digests.digest(lang)
        now = self.clock()  # (a 429/503's Retry-After, any task's, any process's, holds all)
        state = self.state.not_ahead(lang, task, now)
        if self.model is not None and (until := self.state.quiet_until(now)) is not None:
            why = f"the model endpoint asked not to be asked before {format_timestamp(until)}"
            return Decision(False, why, recorded=False, retry_after=(until - now).total_seconds())
        if force:
            return Decision(True, "forced", digest)
        if digest == EMPTY_EVENT_LOG:  # a run now would hold back a new vault's first events
            return Decision(False, "the event log is empty: no events yet", digest)
        if digest == state.last_digest:
            return Decision(False, "the event log is unchanged since the last success", digest)
        interval = timedelta(hours=self.settings.min_interval_hours)
        last_success = parse_time(state.last_success)
        if last_success is not None and now < last_success + interval:
            later = format_timestamp(last_success + interval)
            return Decision(False, f"interval: not before {later}", digest)
        last_run = parse_time(state.last_run)
        if backoff and state.last_error is not None and last_run is not None:
            retry = last_run + min(interval, timedelta(hours=1))
            if now < retry:  # (the daemon's wait: `indexer maintain` runs it at once)
                why = f"failed: the daemon runs it again after {format_timestamp(retry)}"
                return Decision(False, why, digest, recorded=False)
        return Decision(True, "due: the event log changed", digest)

    def _read_only(self, lang: str, path: str) -> bool:
        """Whether a person made the task's output read-only (``chmod a-w``)."""
        try:
            with self.vault.sandbox.open(self.vault.sandbox.resolve(lang, path)) as place:
                info = place.lstat()
            if info is not None:
                fsops.refuse_read_only(info)
        except ForbiddenPathError:
            return True
        except (VaultError, OSError):
            return False  # (the run says what is wrong)
        return False

    # -- runs ------------------------------------------------------------------------------

    async def run_task(
        self, lang: str, task: str, *, force: bool = False, backoff: bool = False
    ) -> Outcome:
        """Check one task and run it when due, holding its run lock; records the result."""
        decision = await asyncio.to_thread(self.check, lang, task, force=force, backoff=backoff)
        if not decision.due:
            if decision.recorded:
                await asyncio.to_thread(self._record_skip, lang, task, decision.reason)
            return Outcome(lang, task, "skip", decision.reason, retry_after=decision.retry_after)
        with self.state.run_lock(lang, task) as acquired:
            if not acquired:
                return Outcome(lang, task, "skip", "another run of this task is in progress")
            # again under the lock: a run elsewhere may have just succeeded on these inputs
            decision = await asyncio.to_thread(self.check, lang, task, force=force, backoff=backoff)
            if not decision.due:
                return Outcome(
                    lang, task, "skip", decision.reason, retry_after=decision.retry_after
                )
            assert decision.digest is not None
            try:
                answer = await self._run(lang, task, decision.digest)
            except (
                ModelError, LoopError, AnswerError, InputError, VaultError, OSError,
                UnicodeDecodeError,  # (a prompt file changed since the start)
            ) as err:  # fmt: skip
                message = _error_text(err)
                log.warning("maintenance %s/%s failed: %s", lang, task, message)
                asked = err.retry_after if isinstance(err, ModelError) else None
                why, wait = await asyncio.to_thread(self._record_error, lang, task, message, asked)
                down = isinstance(err, ModelError) and err.down
                return Outcome(lang, task, "error", why, message, down, wait)
            except Exception as err:  # a bug or an answer nothing foresaw: still recorded
                message = _error_text(err)
                log.exception("maintenance %s/%s failed unexpectedly", lang, task)
                await asyncio.to_thread(self._record_error, lang, task, message)
                return Outcome(lang, task, "error", "the run failed", message)
            await asyncio.to_thread(self._record_success, lang, task, answer, decision.digest)
            log.info("maintenance %s/%s: %s (%s)", lang, task, answer.action, answer.reason)
            return Outcome(lang, task, answer.action, answer.reason)

    async def run_due(
        self,
        langs: list[str] | None = None,
        tasks: list[str] | None = None,
        *,
        force: bool = False,
        backoff: bool = False,
        wait_up_to: float = 0.0,
    ) -> list[Outcome]:
        """Every (lang, task) asked for (default: all), one by one; once the model gave no
        answer at all, the rest are skipped (a hanging model cost its whole timeout at each).
        A ``Retry-After`` up to ``wait_up_to`` s is waited out and the task tried once more."""
        outcomes: list[Outcome] = []
        waited = False
        for lang in langs if langs is not None else self.langs():
            for task in tasks if tasks is not None else list(TASKS):
                down = next((o for o in outcomes if o.model_down), None)
                if down is not None:
                    why = _NOT_ASKED + (f" ({down.reason})" if down.retry_after else "")
                    outcomes.append(Outcome(lang, task, "skip", why))
                    continue
                outcome = await self.run_task(lang, task, force=force, backoff=backoff)
                wait = outcome.retry_after
                if wait is not None and wait <= wait_up_to and not waited:
                    log.warning("maintenance: the model endpoint asked to wait %.0f s", wait)
                    waited = True  # (once per run: an endpoint that asks again is left)
                    await asyncio.sleep(wait)
                    outcome = await self.run_task(lang, task, force=force, backoff=backoff)
                outcomes.append(outcome)
        return outcomes

    async def _run(self, lang: str, task: str, digest: str) -> Answer:
        """One run: the model's (prompt, read-only tool loop, strict answer) or, without
        one, the deterministic path's answer; written on replace."""
        output = TASKS[task].output
        try:
            current = await asyncio.to_thread(self.vault.read, lang, output)
        except NotFoundError:
            current = None
        if current is not None and (why := too_long(current["content"], output)):
            raise InputError(f"{why}; it is left as it is, for a person")
        if current is not None and current.get("encoding", "utf-8") != "utf-8":
            # (read answers base64: a model shown that would rewrite a file it never read)
            raise InputError(
                f"{output} is not UTF-8 text (saved in another encoding?): it is left as it"
                " is, unread by the model; save it as UTF-8 for the next run"
            )
        text = current["content"] if current else None
        quoted: set[str] = set()  # the notes the model's tools returned
        if self.model is None:  # (the deterministic path)
            found = await asyncio.to_thread(self._extracted, lang, task, text)
            answer = Answer(found.action, found.reason, found.content, found.mark)
        else:
            answer = parse_answer(await self._asked(lang, task, digest, text, quoted))
        return await self._written(lang, task, answer, current, quoted)

    def _extracted(self, lang: str, task: str, current: str | None) -> Extracted:
        after = self.state.get(lang, task).last_entry  # (the entries taken before)
        found = event_sections(self.vault, lang, MAX_SECTIONS)
        return extracted(found, task, current, after, lang)

    async def _asked(
        self, lang: str, task: str, digest: str, current: str | None, quoted: set[str]
    ) -> str:
        """The model's final answer to the task's prompt, after its read-only tool calls."""
        assert self.model is not None
        output = TASKS[task].output
        entries = await asyncio.to_thread(newest_entries, self.vault, lang)
        messages = build_messages(
            prompt=self.prompt(task),
            task=task,
            lang=lang,
            output=output,
            current=current,
            entries=entries,
            digest=digest,
            last_digest=self.state.get(lang, task).last_digest,
        )
        tools = ReadOnlyTools(self.vault, self.index, lang, quoted)
        return await run_tool_loop(
            self.model,
            messages,
            tools,
            max_steps=self.settings.max_steps,
            timeout=self.settings.timeout,
        )

    async def _written(
        self, lang: str, task: str, answer: Answer, current: dict | None, quoted: set[str]
    ) -> Answer:
        """``answer``, its file written on a replace that changes it (cleaned first)."""
        output = TASKS[task].output
        if answer.action == "replace":
            assert answer.content is not None
            if current is not None and answer.content.strip() == current["content"].strip():
                return replace(
                    answer, action="none", reason=f"{answer.reason} (the answer repeated the file)"
                )
            if why := too_long(answer.content, output):
                raise AnswerError(why)
            cleaned = without_controls(answer.content)
            written, redacted = await asyncio.to_thread(redact_secrets, cleaned)
            if redacted:
                log.warning(
                    "maintenance (%s, %s): %d credential(s) in the model's %s were redacted",
                    lang,
                    task,
                    redacted,
                    output,
                )
            before = current["content"] if current else None
            content = without_foreign_keys(_with_kept_keys(before, written), before)
            if before is not None and _same_note(content, before):  # (the body alone, say)
                return replace(
                    answer, action="none", reason=f"{answer.reason} (the answer repeated the file)"
                )
            etag = current["etag"] if current else ""
            mode = await asyncio.to_thread(distilled_mode, self.vault, lang, output, quoted)
            await asyncio.to_thread(self.write, lang, task, content, etag, mode)
        return answer

    def prompt(self, task: str) -> str:
        """The task's prompt: the file a setting names, else the shipped one."""
        shipped = self.prompts_dir / "maintenance" / f"{task}.md"
        path = self.settings.prompt_files.get(task) or shipped
        return path.read_text(encoding="utf-8")

    # -- state -----------------------------------------------------------------------------

    def _now(self) -> str:
        return format_timestamp(self.clock().replace(microsecond=0))

    def _record_skip(self, lang: str, task: str, reason: str) -> None:
        current = self.state.get(lang, task)
        if (current.last_action, current.reason) != ("skip", reason):  # else: no lock, no write
            self.state.update(lang, task, lambda s: replace(s, last_action="skip", reason=reason))

    def _record_error(
        self, lang: str, task: str, message: str, retry_after: float | None = None
    ) -> tuple[str, float | None]:
        """Record a failure, and the moment an endpoint's ``Retry-After`` ends (which holds
        every run until then: ``check``); the outcome's reason and seconds to that."""
        now = self._now()
        retry_at = quiet_end(self.clock(), retry_after) if retry_after else None
        until = format_timestamp(retry_at) if retry_at is not None else None
        self.state.update(
            lang,
            task,
            lambda s: replace(
                s,
                last_action="error",
                last_run=now,
                last_error=message,
                reason="the run failed; it is retried when next due",
                retry_at=until,
            ),
        )
        if retry_at is None:
            return "the run failed", None
        wait = max(0.0, (retry_at - self.clock()).total_seconds())
        return f"the run failed; the model endpoint asks to retry after {until}", wait

    def _record_success(self, lang: str, task: str, answer: Answer, digest: str) -> None:
        now = self._now()
        self.state.update(
            lang,
            task,
            lambda s: TaskState(
                last_action=answer.action,
                last_run=now,
                last_success=now,
                last_digest=digest,
                last_error=None,
                reason=answer.reason,
                last_entry=answer.mark or s.last_entry,
            ),
        )

    # -- the troubleshooting view ----------------------------------------------------------

    def status(self) -> list[dict[str, Any]]:
        """One row per vault and task: enabled, the recorded state, and whether the daemon
        would run it now (and why not)."""
        states = self.state.load()
        langs = set(self.langs())
        rows = []
        for lang in sorted(langs | set(states)):
            for task in TASKS:
                decision = self.check(lang, task, backoff=True) if lang in langs else None
                rows.append(
                    {
                        "lang": lang,
                        "task": task,
                        "output": TASKS[task].output,
                        "enabled": task in self.settings.enabled,
                        "due": decision.due if decision else False,
                        "why": decision.reason if decision else "the vault is gone",
                        **vars(states.get(lang, {}).get(task, TaskState())),
                    }
                )
        return rows


# Keys the write itself sets: ``title`` follows the new text's heading when the answer
# names none; the vault keeps ``id`` and ``created`` and stamps ``updated``.
_NOT_CARRIED = frozenset({"title", "updated"})


def _with_kept_keys(current: str | None, answer: str) -> str:
    """The answer with the frontmatter keys of the file as it was that the answer leaves
    out (a person's ``tags``, ``pinned``...): the prompt asks the model to keep them, and
    an answer of a body alone dropped them all. The answer's own values win."""
    if current is None:
        return answer
    try:
        before, _ = parse_frontmatter(current)
        after, body = parse_frontmatter(answer)
    except InvalidFrontmatterError:
        return answer  # (the write says what is wrong with the answer)
    if all(key in after or key in _NOT_CARRIED for key in before):
        return answer
    # The file's keys in its order (the answer's values win), then the answer's new ones.
    merged = {key: value for key, value in before.items() if key not in _NOT_CARRIED}
    merged.update(after)
    return render_note(merged, body)


_SAME_MOMENT = datetime(2000, 1, 1, tzinfo=UTC)


def _same_note(content: str, current: str) -> bool:
    """Whether writing ``content`` over ``current`` would change nothing but ``updated``:
    both as the vault writes them (frontmatter normalized, ``id`` and ``created`` kept),
    at one moment. An answer of the body alone, as the prompt asks, is the file it
    repeats once the file's keys are carried over."""
    try:
        written = normalize_frontmatter_text(content, current, now=_SAME_MOMENT)
        return written == normalize_frontmatter_text(current, current, now=_SAME_MOMENT)
    except (InvalidFrontmatterError, ValueError):
        return False  # (the write says what is wrong)


_NOT_ASKED = "not run: the model gave no answer to an earlier task of this run"


def _error_text(err: Exception) -> str:
    if isinstance(err, ModelError | LoopError):
        kind = "model"
    elif isinstance(err, AnswerError):
        kind = "malformed answer"
    else:
        kind = "vault" if isinstance(err, VaultError) else "error"  # a read or a write
    text = f"{kind}: {err}".encode("utf-8", "backslashreplace").decode("utf-8")
    return cut_chars(one_line(text), MAX_ERROR_CHARS)  # (a model endpoint's: no escapes)
