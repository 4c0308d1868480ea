"""The background jobs' thread: runs coroutines off the caller's loop, stops cleanly."""

from __future__ import annotations

import asyncio
import logging
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


def test_stop_waits_for_the_write_a_cancelled_job_left_in_its_thread() -> None:
    """A job cancelled while ``asyncio.to_thread`` writes (the summary pass writing a
    folder's summary): the stop returned at once and the write went on after it, past
    the index's close (its summary missing from the index, or stale)."""
    runner = JobRunner()
    started, release = threading.Event(), threading.Event()
    written: list[str] = []

    def write() -> None:
        started.set()
        release.wait(10)
        written.append("summary")

    async def job() -> None:
        await asyncio.to_thread(write)

    runner.submit(job())
    assert started.wait(5)
    stopping = threading.Thread(target=runner.stop, args=(10,))
    stopping.start()
    stopping.join(0.5)
    assert stopping.is_alive() and written == []  # (still writing: the stop waits)
    release.set()
    stopping.join(10)
    assert not stopping.is_alive() and written == ["summary"]
    assert runner.loop.is_closed()


def test_a_stop_past_its_time_says_a_job_still_runs(caplog: pytest.LogCaptureFixture) -> None:
    """A job's thread still writing when the stop's time ran out went on silently after
    the stop (and the index's close)."""
    runner = JobRunner()
    started, release = threading.Event(), threading.Event()

    async def job() -> None:
        await asyncio.to_thread(lambda: (started.set(), release.wait(10)))

    runner.submit(job())
    assert started.wait(5)
    try:
        with caplog.at_level(logging.WARNING, logger="indexer.jobs"):
            runner.stop(0.3)
        assert "still running" in caplog.text
    finally:
        release.set()
