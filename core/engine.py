"""Assembling the engine: one store, one clock, one wake signal, a runtime, the scheduler and
the operator API. ``coven daemon``, the ``coven`` commands and the tray app all build it here,
so the loop they run is the same loop, not a copy."""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from coven_core.clock import Clock, SystemClock, WakeReason, WakeSignal
from coven_core.store.location import resolve_data_dir
from coven_core.store.store import Store
from coven_core.tz import tzdb

# The scheduler, the runner runtime and the operator API are imported where they are used:
# ``coven status`` opens an engine to read, and must not pay for what it never runs.
if TYPE_CHECKING:
    from coven_core.operator import Operator
    from coven_core.passes import PassReport
    from coven_core.runtime.base import Runtime
    from coven_core.scheduler import Limits, Scheduler


class Engine:
    """The store, the clock and the wake signal one process shares; the operator API and a
    scheduler are built from them on demand."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        wake: WakeSignal,
        wake_everyone: Callable[[WakeReason], None],  # this process's scheduler and every other
    ) -> None:
        self.store = store
        self.clock = clock
        self.wake = wake
        self.wake_everyone = wake_everyone

    @functools.cached_property
    def operator(self) -> Operator:
        """Built on first use: a command that only reads never loads the operator API."""
        from coven_core.operator import Operator

        return Operator(self.store, self.clock, self.wake_everyone)

    def scheduler(self, runtime: Runtime | None = None, limits: Limits | None = None) -> Scheduler:
        from coven_core.runtime.runner import RunnerRuntime
        from coven_core.scheduler import Scheduler

        runtime = runtime or RunnerRuntime(self.clock, self.wake, self.store.data_dir / "attempts")
        return Scheduler(self.store, self.clock, runtime, self.wake, limits=limits)

    def close(self) -> None:
        self.store.close()


def open_engine(
    data_dir: str | Path | None = None, clock: Clock | None = None, *, create: bool = True
) -> Engine:
    """Open the store (``--data-dir``, ``COVEN_DATA_DIR`` or the user data dir); without
    ``create``, a missing store is a NoStoreError and nothing is created."""
    tzdb.activate()
    clock = clock or SystemClock(offset=clock_offset_for_tests())
    wake = WakeSignal()
    store = Store.open(resolve_data_dir(data_dir), clock.now_utc(), create=create)
    wake_dir = store.wake_dir

    def wake_everyone(reason: WakeReason) -> None:
        wake.set(reason)  # this process's scheduler, if it runs one
        from coven_core.wakeup import notify  # sockets: only when something is changed

        notify(wake_dir, reason)  # and every other scheduler on this store

    return Engine(store, clock, wake, wake_everyone)


def clock_offset_for_tests() -> timedelta | None:
    """``COVEN_TEST_CLOCK_OFFSET`` (seconds) shifts the wall clock of every process that a
    system test starts on one store, so that real processes can meet a moment a test chose
    without waiting for it. Unset in normal use."""
    raw = os.environ.get("COVEN_TEST_CLOCK_OFFSET")
    return None if not raw else timedelta(seconds=float(raw))


class SchedulerThread(threading.Thread):
    """The scheduler loop on one worker thread, on its own store connection — the loop of
    ``coven daemon``, not a copy. Stop it with :meth:`stop`, which drains within the limits'
    bounded time; :attr:`left_running` then says how many commands were still running."""

    def __init__(
        self,
        data_dir: str | Path | None,
        clock: Clock,
        wake: WakeSignal,
        *,
        listener: Callable[[PassReport], None] | None = None,
        runtime_factory: Callable[[Store], Runtime] | None = None,
        limits: Limits | None = None,
    ) -> None:
        from coven_core.lease import Holder

        super().__init__(name="coven-scheduler", daemon=True)
        self._data_dir, self._clock, self.wake = data_dir, clock, wake
        self._listener, self._factory, self._limits = listener, runtime_factory, limits
        self.left_running: int | None = None
        self.error: BaseException | None = None
        self.holder = Holder.of_this_process()  # who this scheduler is in the lease

    def run(self) -> None:
        from coven_core.scheduler import Scheduler
        from coven_core.wakeup import WakeListener

        store = Store.open(resolve_data_dir(self._data_dir), self._clock.now_utc())
        runtime = (self._factory or self._runner_runtime)(store)
        scheduler = Scheduler(store, self._clock, runtime, self.wake, limits=self._limits,
                              holder=self.holder, listener=self._listener)  # fmt: skip
        try:
            with WakeListener.start(store.wake_dir, self.wake):
                scheduler.run()
            self.left_running = runtime.active()
        except BaseException as error:  # reported to the app, which shows it
            self.error = error
            raise
        finally:
            store.close()

    def _runner_runtime(self, store: Store) -> Runtime:
        from coven_core.runtime.runner import RunnerRuntime

        return RunnerRuntime(self._clock, self.wake, store.data_dir / "attempts")

    def stop(self, timeout: float) -> None:
        self.wake.set(WakeReason.SHUTDOWN)
        self.join(timeout)


def run_daemon(engine: Engine, limits: Limits | None = None) -> int:
    """The headless scheduler in the foreground until SIGTERM or SIGINT, then a drain."""
    scheduler = engine.scheduler(limits=limits)
    stop = _on_stop_signals(engine.wake)
    from coven_core.wakeup import WakeListener

    with WakeListener.start(engine.store.wake_dir, engine.wake):
        try:
            scheduler.run()
        finally:
            stop()
    return 0


def _on_stop_signals(wake: WakeSignal) -> Callable[[], None]:
    """SIGTERM/SIGINT become a SHUTDOWN wake (the loop drains); returns an undo function."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    for sig in previous:
        signal.signal(sig, lambda *_: wake.set(WakeReason.SHUTDOWN))

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore
