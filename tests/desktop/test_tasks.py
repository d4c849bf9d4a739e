"""Tasks started from slots are kept until done and can be awaited together."""

from __future__ import annotations

import asyncio

import qasync

from coven_desktop.tasks import Tasks


def test_settle_waits_for_tasks_and_the_tasks_they_start(loop: qasync.QEventLoop) -> None:
    tasks, done = Tasks(), []

    async def inner() -> None:
        await asyncio.sleep(0)
        done.append("inner")

    async def outer() -> None:
        await asyncio.sleep(0)
        tasks.spawn(inner())
        done.append("outer")

    async def scenario() -> None:
        tasks.spawn(outer())
        assert tasks
        await tasks.settle()

    loop.run_until_complete(scenario())
    assert done == ["outer", "inner"] and not tasks


def test_a_failed_task_does_not_stop_settling(loop: qasync.QEventLoop) -> None:
    tasks = Tasks()

    async def fails() -> None:
        raise ValueError("boom")

    async def scenario() -> None:
        failed = tasks.spawn(fails())
        await tasks.settle()
        assert isinstance(failed.exception(), ValueError)

    loop.run_until_complete(scenario())
