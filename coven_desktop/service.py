"""The GUI's one door to the engine, and the one bridge back (DESIGN §2, §12).

* The scheduler runs on **one worker thread** (:class:`coven_core.engine.SchedulerThread`):
  the loop of ``coven daemon``, on its own store connection.
* The operator and query APIs run on **one executor thread** with a store connection of their
  own, and the GUI awaits them through qasync — it never blocks on SQLite or a process.
* Engine news comes back through one bridge: the scheduler's pass listener hops to the GUI
  thread (through the event loop, see :meth:`EngineService._from_worker`), emits
  ``passFinished``, reads the events that are new since the last one it saw and emits
  ``eventsArrived``. Views update from those signals, never by polling.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QObject, Signal

from coven_core import queries
from coven_core.clock import Clock, WakeSignal
from coven_core.engine import Engine, SchedulerThread, open_engine
from coven_core.host import Host
from coven_desktop.tasks import Tasks

if TYPE_CHECKING:
    from coven_core.engine import Limits, PassReport, Runtime, Store

T = TypeVar("T")


class EngineService(QObject):
    passFinished = Signal(object)  # a PassReport, from the worker thread (queued)
    eventsArrived = Signal(object)  # list[Event], on the GUI thread

    def __init__(
        self,
        data_dir: str | Path | None,
        clock: Clock,
        *,
        runtime_factory: Callable[[Store], Runtime] | None = None,
        limits: Limits | None = None,
        host: Host | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._data_dir, self._clock = data_dir, clock
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="coven-operator")
        self._engine: Engine | None = None
        self._seen_seq = 0
        self._tasks = Tasks()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        self.scheduler = SchedulerThread(
            data_dir, clock, WakeSignal(), listener=self._from_worker,
            runtime_factory=runtime_factory, limits=limits, host=host,
        )  # fmt: skip

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> Engine:
        """Open the store (creating it) off the GUI thread, then start the scheduler."""
        self._loop = asyncio.get_running_loop()
        engine = await self._run(lambda: open_engine(self._data_dir, clock=self._clock))
        self._engine = engine
        self._seen_seq = await self.call(lambda engine: queries.last_event_seq(engine.store))
        self.scheduler.start()
        return engine

    async def settle(self) -> None:
        """Wait for the bridge's reads in flight."""
        await self._tasks.settle()

    async def stop(self, timeout: float) -> int | None:
        """Drain within ``timeout`` seconds; how many commands were left running (None: the
        scheduler did not stop in time — they are recorded by the next start).

        The drain waits for running commands (up to ``timeout``): it is awaited on the
        operator thread — after any call still in flight there — so the GUI thread's event
        loop runs on meanwhile, and a window or the tray can say what Quit waits for."""
        self._stopping = True  # news from the last passes has no one left to tell
        await self._run(lambda: self.scheduler.stop(timeout))
        left = None if self.scheduler.is_alive() else self.scheduler.left_running
        if self._engine is not None:
            await self._run(self._engine.close)
        self._executor.shutdown(wait=True)  # nothing is left in it: returns at once
        return left

    # -- calls ------------------------------------------------------------------------------
    async def call(self, work: Callable[[Engine], T]) -> T:
        """Run ``work(engine)`` on the operator thread and await its result."""
        engine = self._engine
        if engine is None:
            raise RuntimeError("the engine service has not started")
        return await self._run(lambda: work(engine))

    async def _run(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)

    # -- the bridge -------------------------------------------------------------------------
    def _from_worker(self, report: PassReport) -> None:
        """Called on the scheduler's thread: hop to the GUI thread through the event loop,
        so that no Qt object is touched from the worker thread; the signals are emitted on
        the GUI thread."""
        loop = self._loop
        if self._stopping or loop is None or loop.is_closed():
            return
        loop.call_soon_threadsafe(self._on_pass, report)

    def _on_pass(self, report: PassReport) -> None:
        if self._stopping or self._loop is None or self._loop.is_closed():
            return
        self.passFinished.emit(report)
        if _quiet(report):
            return  # an idle timed pass wrote no news: no read, no wake-up of the GUI
        self._tasks.spawn(self._catch_up())

    async def _catch_up(self) -> None:
        if self._engine is None:
            return
        seen = self._seen_seq
        found = await self.call(lambda engine: queries.events_since(engine.store, seen))
        # Catch-ups overlap (a pass's and an action's): each event is delivered once.
        new = [event for event in found if event.seq > self._seen_seq]
        if new:
            self._seen_seq = new[-1].seq
            self.eventsArrived.emit(new)

    async def refresh(self) -> None:
        """Catch up now (after an operator call of our own)."""
        await self._catch_up()


def _quiet(report: PassReport) -> bool:
    busy = (report.planned, report.claimed, report.dispatched, report.settled, report.recovered)
    return report.trigger in ("deadline", "safety_cap") and not any(busy) and not report.error
