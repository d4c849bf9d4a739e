"""Coroutines a view starts from its Qt slots, kept until they finish.

A slot cannot await; it starts a task on the (qasync) event loop instead. The task must be
referenced until it is done (asyncio keeps only a weak reference), and tests and an orderly
close need to wait for all of them: :class:`Tasks` does both. It is the app's one way to
start a coroutine from a slot or a callback.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


class Tasks:
    def __init__(self) -> None:
        self._running: set[asyncio.Future[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Future[Any]:
        task = asyncio.get_event_loop().create_task(work)
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task

    def __bool__(self) -> bool:
        return bool(self._running)

    async def settle(self) -> list[BaseException]:
        """Until every task started so far, and every task they started, has finished; what
        the failed ones raised."""
        failures: list[BaseException] = []
        while self._running:
            results = await asyncio.gather(*list(self._running), return_exceptions=True)
            failures += [result for result in results if isinstance(result, BaseException)]
        return failures
