"""The background jobs' thread: runs coroutines off the caller's loop, stops cleanly."""

from __future__ import annotations

import asyncio
import threading

import pytest

from indexer.jobs.runner import JobRunner


def test_jobs_run_on_their_own_thread_and_stop_cancels_the_rest() -> None:
    runner = JobRunner()
    ran_on: list[str] = []

    async def quick() -> int:
        ran_on.append(threading.current_thread().name)
        return 7

    started = threading.Event()

    async def forever() -> None:
        started.set()
        await asyncio.sleep(3600)

    assert runner.submit(quick()).result(5) == 7
    assert ran_on == ["indexer-jobs"]
    pending = runner.submit(forever())
    assert started.wait(5)
    runner.stop(5)
    assert pending.cancelled()
    assert runner.loop.is_closed()


def test_a_failing_job_is_logged_and_kept(caplog: pytest.LogCaptureFixture) -> None:
    runner = JobRunner()

    async def broken() -> None:
        raise ValueError("boom")

    future = runner.submit(broken())
    with pytest.raises(ValueError, match="boom"):
        future.result(5)
    runner.stop(5)
    assert "a background job failed" in caplog.text
