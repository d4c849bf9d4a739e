"""The in-engine runtime: commands as direct child processes, each in its own session.

A stopgap until the runner and its journal (issue #4): it cannot adopt a command after the
engine restarts, so an attempt left running by a previous process is *ambiguous* to it.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
from datetime import datetime

from coven_core.clock import Clock, WakeReason, WakeSignal
from coven_core.model import FailureClass
from coven_core.runtime.base import Exit, Launch, LaunchError, Started, Unfinished, unknowable

#: How long a command may take to stop after SIGTERM before SIGKILL.
STOP_GRACE = 5.0


class LocalProcessRuntime:
    def __init__(self, clock: Clock, wake: WakeSignal) -> None:
        self._clock, self._wake = clock, wake
        self._exits: queue.Queue[Exit] = queue.Queue()
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()

    def start(self, launch: Launch) -> Started:
        process = _spawn(launch)
        waiter = threading.Thread(
            target=self._wait, args=(launch, process), name=f"wait-{launch.attempt_id}",
            daemon=True,
        )  # fmt: skip
        with self._lock:
            self._threads[launch.attempt_id] = waiter
        waiter.start()
        return Started(process.pid)

    def recover(self, attempt: Unfinished, now: datetime) -> Exit | None:
        return unknowable(attempt, now)

    def cancel(self, attempt_id: str) -> bool:
        return False  # this stopgap cannot; the runner runtime does

    def collect(self) -> list[Exit]:
        exits = []
        while True:
            try:
                exits.append(self._exits.get_nowait())
            except queue.Empty:
                return exits

    def active(self) -> int:
        with self._lock:
            return len(self._threads)

    def drain(self, timeout: float) -> None:
        with self._lock:
            waiters = list(self._threads.values())
        for waiter in waiters:
            waiter.join(timeout)  # bounded: at most `timeout` per straggler

    def _wait(self, launch: Launch, process: subprocess.Popen[bytes]) -> None:
        timeout = None if launch.timeout is None else launch.timeout.total_seconds()
        timed_out = False
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop_group(process)
        self._exits.put(_exit_of(launch, process.returncode, timed_out, self._clock))
        with self._lock:
            del self._threads[launch.attempt_id]
        self._wake.set(WakeReason.RUN_FINISHED)


def _spawn(launch: Launch) -> subprocess.Popen[bytes]:
    if launch.cwd is not None and not os.path.isdir(launch.cwd):
        raise LaunchError(FailureClass.VALIDATION, f"working directory {launch.cwd} does not exist")
    env = {**os.environ, **dict(launch.env)}
    try:
        return subprocess.Popen(
            launch.argv, cwd=launch.cwd, env=env, start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
    except FileNotFoundError:
        raise LaunchError(FailureClass.VALIDATION, f"{launch.argv[0]}: no such file") from None
    except PermissionError:
        raise LaunchError(FailureClass.REFUSED, f"{launch.argv[0]}: permission denied") from None
    except OSError as error:
        raise LaunchError(FailureClass.RUNTIME_UNAVAILABLE, f"could not start: {error}") from None


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """Polite signal to the whole group, then a forced one after the grace period."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(STOP_GRACE)
            return
        except subprocess.TimeoutExpired:
            continue


def _exit_of(launch: Launch, code: int | None, timed_out: bool, clock: Clock) -> Exit:
    at = clock.now_utc()
    if timed_out:
        return Exit(launch.attempt_id, at, None, _signal_of(code), FailureClass.TIMED_OUT,
                    "stopped after its timeout")  # fmt: skip
    if code is not None and code < 0:
        return Exit(launch.attempt_id, at, None, -code, FailureClass.ACTION_FAILED,
                    f"killed by signal {-code}")  # fmt: skip
    failure = None if code == 0 else FailureClass.ACTION_FAILED
    message = None if code == 0 else f"exited with status {code}"
    return Exit(launch.attempt_id, at, code, None, failure, message)


def _signal_of(code: int | None) -> int | None:
    return -code if code is not None and code < 0 else None
