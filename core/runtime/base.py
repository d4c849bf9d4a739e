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


@dataclass(frozen=True)
class Exit:
    """What the runtime observed when an attempt ended."""

    attempt_id: str
    ended_at: datetime
    exit_code: int | None = None
    exit_signal: int | None = None
    failure_class: FailureClass | None = None  # None: it ran and exited with exit_code
    message: str | None = None

    @property
    def succeeded(self) -> bool:
        return self.failure_class is None and self.exit_code == 0


class LaunchError(CovenError):
    """The command could not be started; nothing ran."""

    def __init__(self, failure_class: FailureClass, message: str) -> None:
        super().__init__(message)
        self.failure_class = failure_class


class Runtime(Protocol):
    def start(self, launch: Launch) -> int | None:
        """Start the attempt; returns the command's pid. Raises LaunchError if nothing ran."""
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
