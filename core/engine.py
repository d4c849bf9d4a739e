"""Assembling the engine: one store, one clock, one wake signal, a runtime, the scheduler and
the operator API. ``coven daemon``, the ``coven`` commands and the tray app all build it here,
so the loop they run is the same loop, not a copy."""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from coven_core.clock import Clock, SystemClock, WakeReason, WakeSignal
from coven_core.store.location import prepare_data_dir as prepare_data_dir
from coven_core.store.location import resolve_data_dir as resolve_data_dir
from coven_core.store.store import Store as Store
from coven_core.system.socketpath import SocketDir as SocketDir
from coven_core.tz import tzdb
from coven_core.tz.babel_zone import import_babel_dates_safely
from coven_core.tz.tzdb import activate as activate_tzdb

# A host (the tray app) imports this face before anything that imports babel.dates: an odd
# TZ must never end it (issue 19). Not in coven_core/__init__: the runner stays stdlib-only.
import_babel_dates_safely()

# The scheduler, the runner runtime and the operator API are imported where they are used:
# ``coven status`` opens an engine to read, and must not pay for what it never runs. A host
# (the tray app) names the types below in its annotations only.
if TYPE_CHECKING:
    import argparse

    from coven_core.host import Host
    from coven_core.operator import Operator
    from coven_core.runtime.base import Runtime as Runtime
    from coven_core.scheduling.passes import PassReport as PassReport
    from coven_core.scheduling.scheduler import Limits as Limits
    from coven_core.scheduling.scheduler import Scheduler

__all__ = [
    "STOP_SIGNALS", "Engine", "SchedulerThread", "SocketDir", "Store", "activate_tzdb",
    "add_log_level_option", "default_clock", "log_path", "open_engine", "prepare_data_dir",
    "resolve_data_dir", "run_daemon", "start_logging", "use_default_clock",
]  # fmt: skip


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

    def scheduler(
        self, runtime: Runtime | None = None, limits: Limits | None = None,
        host: Host | None = None,
    ) -> Scheduler:  # fmt: skip
        from coven_core.runtime.runner import RunnerRuntime
        from coven_core.scheduling.scheduler import Scheduler

        runtime = runtime or RunnerRuntime(self.clock, self.wake, self.store.data_dir / "attempts")
        return Scheduler(self.store, self.clock, runtime, self.wake, limits=limits, host=host)

    def close(self) -> None:
        self.store.close()


def open_engine(
    data_dir: str | Path | None = None, clock: Clock | None = None, *, create: bool = True
) -> Engine:
    """Open the store (``--data-dir``, ``COVEN_DATA_DIR`` or the user data dir); without
    ``create``, a missing store is a NoStoreError and nothing is created."""
    tzdb.activate()
    clock = clock or default_clock()
    wake = WakeSignal()
    store = Store.open(resolve_data_dir(data_dir), clock.now_utc(), create=create)
    wake_dir = store.wake_dir

    def wake_everyone(reason: WakeReason) -> None:
        wake.set(reason)  # this process's scheduler, if it runs one
        from coven_core.scheduling.wakeup import notify  # sockets: only when something is changed

        notify(wake_dir, reason)  # and every other scheduler on this store

    return Engine(store, clock, wake, wake_everyone)


_clock_factory: Callable[[], Clock] = SystemClock


def default_clock() -> Clock:
    """The clock of a process given none: the system's, unless a wrapper entry point chose
    another for the whole process before it started (see :func:`use_default_clock`)."""
    return _clock_factory()


def use_default_clock(factory: Callable[[], Clock]) -> None:
    """Make ``factory`` build every clock :func:`default_clock` hands out from now on.

    For an entry point that wraps ``coven`` or ``coven-desktop`` (``coven_core.testing``
    runs them on a shifted wall clock); the product itself never calls it."""
    global _clock_factory
    _clock_factory = factory


# -- the log file a host writes (``logging`` is imported only by a host that logs) -----------
def add_log_level_option(parser: argparse.ArgumentParser) -> None:
    """``--log-level``, as ``coven daemon`` and ``coven-desktop`` take it."""
    from coven_core.notation.i18n import _
    from coven_core.system import logfile

    said = _("the least severe records logged to <data dir>/logs/coven.log (default: %(default)s)")
    logfile.add_level_option(parser, said)


def start_logging(data_dir: Path, level: str) -> Path:
    """Log to the store's rotating, private log file; returns its path."""
    from coven_core.system import logfile

    return logfile.start(data_dir, level)


def log_path(data_dir: Path) -> Path:
    """Where the store's log file is."""
    from coven_core.system import logfile

    return logfile.log_path(data_dir)


def load_scheduler() -> None:
    """Import the scheduler and the runner runtime now. ``SchedulerThread`` imports them when
    it starts, so that the CLI's one-shot commands never load them; a host that always runs a
    scheduler (the tray app) loads them before Qt instead (see ``coven_desktop/__init__``)."""
    import coven_core.runtime.runner
    import coven_core.scheduling.scheduler
    import coven_core.scheduling.wakeup  # noqa: F401


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
        host: Host | None = None,
    ) -> None:
        from coven_core.scheduling.lease import Holder

        super().__init__(name="coven-scheduler", daemon=True)
        self._data_dir, self._clock, self.wake = data_dir, clock, wake
        self._listener, self._factory, self._limits = listener, runtime_factory, limits
        self.host = host  # the machine's state its conditions read (None: the portable one)
        self.left_running: int | None = None
        self.error: BaseException | None = None
        self.holder = Holder.of_this_process()  # who this scheduler is in the lease

    def run(self) -> None:
        from coven_core.scheduling.scheduler import Scheduler
        from coven_core.scheduling.wakeup import WakeListener

        store = Store.open(resolve_data_dir(self._data_dir), self._clock.now_utc())
        runtime = (self._factory or self._runner_runtime)(store)
        scheduler = Scheduler(store, self._clock, runtime, self.wake, limits=self._limits,
                              holder=self.holder, listener=self._listener,
                              host=self.host)  # fmt: skip
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
    """The headless scheduler in the foreground until SIGTERM, SIGINT or SIGHUP, then a drain.
    Where logind runs, it keeps the machine awake and hears it go to sleep (DESIGN §14)."""
    import logging  # only here: `coven status` and friends never load it

    from coven_core.scheduling.wakeup import WakeListener
    from coven_core.system.logind import daemon_host

    log = logging.getLogger(__name__)
    log.info("coven daemon %s: scheduling the store in %s", os.getpid(), engine.store.data_dir)
    stop = _on_stop_signals(engine.wake)
    try:
        with daemon_host(engine.wake) as host:  # its listener thread ends with the block
            scheduler = engine.scheduler(limits=limits, host=host)
            with WakeListener.start(engine.store.wake_dir, engine.wake):
                scheduler.run()
    finally:
        stop()
    log.info("coven daemon %s: stopped, %s command(s) left running", os.getpid(),
             scheduler.runtime.active())  # fmt: skip
    return 0


#: What a session sends at logout (SIGTERM, SIGHUP) or a terminal on Ctrl+C: each stops.
STOP_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")


def _on_stop_signals(wake: WakeSignal) -> Callable[[], None]:
    """SIGTERM/SIGINT/SIGHUP become a SHUTDOWN wake (the loop drains); returns an undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    stops = tuple(getattr(signal, name) for name in STOP_SIGNALS if hasattr(signal, name))
    previous = {sig: signal.getsignal(sig) for sig in stops}
    for sig in previous:
        signal.signal(sig, lambda *_: wake.set(WakeReason.SHUTDOWN))

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore
