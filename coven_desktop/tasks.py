"""Coroutines a view starts from its Qt slots, kept until they finish.

A slot cannot await; it starts a task on the (qasync) event loop instead. The task must be
referenced until it is done (asyncio keeps only a weak reference), and tests and an orderly
close need to wait for all of them: :class:`Tasks` does both.
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

    async def settle(self) -> None:
        """Until every task started so far, and every task they started, has finished."""
        while self._running:
            await asyncio.gather(*list(self._running), return_exceptions=True)
