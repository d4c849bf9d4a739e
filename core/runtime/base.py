"""The contract between the scheduler and a runtime.

A runtime starts commands and reports their exits; it never writes the store. Starting must
not block on the command, and every exit wakes the scheduler (``WakeReason.RUN_FINISHED``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from coven_core.errors import CovenError
from coven_core.model import FailureClass


@dataclass(frozen=True)
class Launch:
    """One attempt to start: the command of the revision the occurrence was planned under."""

    attempt_id: str
    occurrence_id: str
    routine_id: str
    argv: tuple[str, ...]
    cwd: str | None
    env: tuple[tuple[str, str], ...]
    timeout: timedelta | None
    shell: bool = False
    stop_grace: timedelta = timedelta(seconds=5)
    #: Safe to run twice: its retry may follow an ambiguous end, so a command its runner left
    #: is watched until it ends (``runtime.runner``) rather than retried beside it.
    idempotent: bool = False


@dataclass(frozen=True)
class Unfinished:
    """An attempt an earlier scheduler left running, as the store remembers it."""

    attempt_id: str
    state: str
    attempt_dir: str | None
    runner_pid: int | None
    runner_start: float | None  # the runner's start mark (``process.start_mark``)
    boot_id: str | None = None  # the boot it was marked in
    idempotent: bool = False  # as :attr:`Launch.idempotent`
    timeout_seconds: float | None = None  # as :attr:`Launch.timeout`, decided at the claim


@dataclass(frozen=True)
class Exit:
    """What the runtime observed when an attempt ended."""

    attempt_id: str
    ended_at: datetime
    exit_code: int | None = None
    exit_signal: int | None = None
    failure_class: FailureClass | None = None  # set when the runtime already classified it
    message: str | None = None
    cancelled: bool = False
    timed_out: bool = False
    stop_confirmed: bool = True
    command_pid: int | None = None
    #: What the command's stdout kept, as its journal says; None when this runtime does not
    #: say, and the attempt's folder is looked at instead (``delivery.has_output``).
    stdout_bytes: int | None = None

    def classify(self) -> FailureClass | None:
        """None for success; otherwise the failure class of DESIGN §6."""
        if self.failure_class is not None:
            return self.failure_class
        if (self.cancelled or self.timed_out) and not self.stop_confirmed:
            return FailureClass.AMBIGUOUS  # never assume a process stopped
        if self.cancelled:
            return FailureClass.CANCELLED
        if self.timed_out:
            return FailureClass.TIMED_OUT
        return None if self.exit_code == 0 else FailureClass.ACTION_FAILED

    def describe(self) -> str | None:
        """A sentence for the history, unless the runtime gave one."""
        if self.message:
            return self.message
        if self.cancelled or self.timed_out:
            what = "cancelled" if self.cancelled else "stopped after its timeout"
            return what if self.stop_confirmed else f"{what}, but the stop was not confirmed"
        if self.exit_signal is not None:
            return f"killed by signal {self.exit_signal}"
        if self.exit_code not in (None, 0):
            return f"exited with status {self.exit_code}"
        return None


@dataclass(frozen=True)
class Started:
    """What the runtime reports about a start: enough to find the attempt again later."""

    pid: int | None  # the runner's pid (or the command's, for the in-engine runtime)
    process_start: float | None = None  # its start mark (``process.start_mark``)
    attempt_dir: str | None = None
    boot_id: str | None = None  # the boot the mark was taken in


class LaunchError(CovenError):
    """The command could not be started; nothing ran."""

    def __init__(self, failure_class: FailureClass, message: str) -> None:
        super().__init__(message)
        self.failure_class = failure_class


class Runtime(Protocol):
    def start(self, launch: Launch) -> Started:
        """Start the attempt. Raises LaunchError if nothing ran."""
        ...

    def recover(self, attempt: Unfinished, now: datetime) -> Exit | None:
        """An attempt an earlier scheduler left: adopt it if it still runs (its exit then
        comes through :meth:`collect`), or return what its evidence says happened."""
        ...

    def cancel(self, attempt_id: str) -> bool:
        """Ask the attempt to stop (polite, then forced). False if this runtime has no such
        running attempt."""
        ...

    def locate(self, attempt: Unfinished) -> Unfinished:
        """Fill in what the store did not get to record (a crash right after the start):
        the attempt's directory and its runner's identity, from the runtime's own evidence."""
        ...

    def collect(self) -> list[Exit]:
        """Exits observed since the last call (non-blocking)."""
        ...

    def active(self) -> int:
        """How many attempts this runtime has started that have not been collected."""
        ...

    def drain(self, timeout: float) -> None:
        """Wait up to ``timeout`` real seconds for active attempts to end (on shutdown)."""
        ...


def as_recorded(attempt: Unfinished) -> Unfinished:
    """``locate`` for runtimes that keep no evidence of their own."""
    return attempt


def unknowable(attempt: Unfinished, now: datetime) -> Exit:
    """For runtimes that keep no evidence: a command that may have started is ambiguous."""
    return Exit(
        attempt.attempt_id, now, failure_class=FailureClass.AMBIGUOUS,
        message="the scheduler stopped while the command may have been running; outcome unknown",
    )  # fmt: skip
