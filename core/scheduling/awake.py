"""Keeping the machine awake while it matters (DESIGN §14).

Two kinds of sleep inhibitor, both handles the host's ``inhibit`` hands out and its
``release`` lets go (logind's descriptors on Linux, the system's power assertions on macOS
and Windows; none where the host has no way): each dies with the process that holds it, so
a crash can never leave the machine awake.

* a **block** inhibitor per active run of a ``--keep-awake`` routine: wanted from the pass
  that claims the run (before its command starts) until the pass that settles it. Each pass
  hands the runs that want one to :meth:`SleepGuard.keep`, which takes what is new and closes
  what ended — adopted runs after a restart included;
* one **delay** inhibitor, held by default, so that a suspend waits until the scheduler has
  recorded the runs in flight and the moment it went to sleep: released after that pass's
  commit, taken again on the first pass after the resume.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping

import apsw

log = logging.getLogger(__name__)

#: ``inhibit(mode, why)``: a handle holding a ``block`` or ``delay`` sleep inhibitor, or
#: None when the host cannot take one.
Inhibit = Callable[[str, str], int | None]

DELAY_WHY = "recording the runs in flight before the machine sleeps"

_KEEP_AWAKE_RUNS = (
    "SELECT o.id, r.name FROM occurrences o INDEXED BY occurrences_active "
    "JOIN revisions v ON v.routine_id = o.routine_id AND v.number = o.revision "
    "JOIN routines r ON r.id = o.routine_id "
    "WHERE o.state IN ('claimed', 'running') AND v.keep_awake"
)

ANY_KEEP_AWAKE = (
    "EXISTS (SELECT 1 FROM occurrences o INDEXED BY occurrences_active "
    "JOIN revisions v ON v.routine_id = o.routine_id AND v.number = o.revision "
    "WHERE o.state IN ('claimed', 'running') AND v.keep_awake)"
)
"""Whether any active run wants the machine awake (asked with the pass's agenda)."""

_IN_FLIGHT = (
    "SELECT o.id FROM occurrences o INDEXED BY occurrences_active "
    "WHERE o.state IN ('claimed', 'running') ORDER BY o.id"
)


def keep_awake_runs(conn: apsw.Connection) -> dict[str, str]:
    """The active occurrences whose revision keeps the machine awake, with their routine."""
    return {str(oid): str(name) for oid, name in conn.execute(_KEEP_AWAKE_RUNS)}


def in_flight(conn: apsw.Connection) -> list[str]:
    """The occurrences claimed or running: what a sleep record names."""
    return [str(row[0]) for row in conn.execute(_IN_FLIGHT)]


class SleepGuard:
    """The inhibitors one scheduler holds."""

    def __init__(self, inhibit: Inhibit | None, release: Callable[[int], None] = os.close) -> None:
        self._inhibit = inhibit
        self._let_go = release
        self.held: dict[str, int] = {}  # occurrence id → its block inhibitor
        self.delay: int | None = None

    def take_delay(self) -> None:
        if self.delay is None:
            self.delay = self._take("delay", DELAY_WHY)

    def release_delay(self) -> None:
        """After the sleep is on record: the suspend may go ahead."""
        if self.delay is not None:
            self._release(self.delay)
            self.delay = None

    def keep(self, wanted: Mapping[str, str]) -> None:
        """Hold one block inhibitor per occurrence in ``wanted`` (id → routine), none other."""
        for oid in [oid for oid in self.held if oid not in wanted]:
            self._release(self.held.pop(oid))
        for oid, routine in wanted.items():
            if oid not in self.held:
                handle = self._take("block", f"routine {routine} is running ({oid})")
                if handle is not None:
                    self.held[oid] = handle

    def release_all(self) -> None:
        self.keep({})
        self.release_delay()

    def _take(self, mode: str, why: str) -> int | None:
        if self._inhibit is None:
            return None
        try:
            return self._inhibit(mode, why)
        except OSError as error:  # the host could not: the run goes on, unprotected
            log.warning("no %s sleep inhibitor (%s): %s", mode, why, error)
            return None

    def _release(self, handle: int) -> None:
        try:
            self._let_go(handle)
        except OSError as error:
            log.warning("releasing sleep inhibitor %s: %s", handle, error)
