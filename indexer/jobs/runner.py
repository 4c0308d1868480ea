"""One thread for the indexer's background jobs, with its own asyncio event loop.

Summaries, maintenance and history pruning run here, off the server's event loop, so a
slow model or a long pass never delays a tool call. Jobs are coroutines: ``submit``
hands one to the loop and returns a ``concurrent.futures.Future``; ``stop`` cancels what
is still running and joins the thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger("indexer.jobs")
T = TypeVar("T")


class JobRunner:
    """A daemon thread running an event loop for background coroutines."""

    def __init__(self, name: str = "indexer-jobs") -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._started = False

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return self._loop

    def start(self) -> None:
        if not self._started:
            self._started = True
            self._thread.start()

    def submit(self, job: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``job`` on the jobs loop; its failure is logged (and kept in the future)."""
        self.start()
        future = asyncio.run_coroutine_threadsafe(job, self._loop)
        future.add_done_callback(_log_failure)
        return future

    def stop(
        self,
        timeout: float = 10.0,
        then: Callable[[], Coroutine[Any, Any, object]] | None = None,
    ) -> None:
        """Cancel the running jobs, run ``then`` on the loop (closing what they used:
        closed first, a job's request in flight failed, and a stop was recorded as the
        model's failure), wait for the threads a job's ``asyncio.to_thread`` started
        (a cancel does not stop them: a summary pass cancelled mid-write went on writing
        its folders' summaries after the stop returned, so after the index closed, which
        then differed from the vault), then stop the loop and join the thread."""
        if self._loop.is_closed():
            return
        if not self._started:  # never used: only the loop to close
            self._loop.close()
            return

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if then is not None:
                await then()
            await asyncio.get_running_loop().shutdown_default_executor()

        try:
            asyncio.run_coroutine_threadsafe(cancel_all(), self._loop).result(timeout)
        except concurrent.futures.TimeoutError:  # (what a job still writes lands after)
            log.warning(
                "jobs: stopped after %g s with a job's work still running (it may still "
                "write a file; the next start's catch-up indexes it)",
                timeout,
            )
        except Exception:  # (the loop went away under the stop: nothing left to wait on)
            log.debug("jobs: the stop's wait ended early", exc_info=True)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()


def _log_failure(future: concurrent.futures.Future[Any]) -> None:
    if future.cancelled():
        return
    error = future.exception()
    if error is not None:
        log.error("a background job failed", exc_info=error)
