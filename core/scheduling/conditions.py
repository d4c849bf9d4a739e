"""Conditions: a new run waits for mains power or the network (DESIGN §14).

A scheduled or triggered moment whose revision asks for a condition that the host's state
does not meet stays waiting — the host wakes the scheduler when the state changes — until its
grace ends, or a later moment of the routine comes due (that one carries the wait on); then
it is skipped with ``condition_unmet`` and the state observed. The state is read once per
pass (:class:`Gate`); a state that cannot be read meets the condition (see ``host``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import apsw

from coven_core.host import HostState
from coven_core.model import OccurrenceKind, Revision, RevisionSpec, SkipReason
from coven_core.scheduling import occurrences
from coven_core.scheduling.occurrences import Stamp, Waiting
from coven_core.store.codec import instant_text
from coven_core.store.query import scalar

_LATER_MOMENT = (
    "SELECT EXISTS (SELECT 1 FROM occurrences WHERE routine_id = ?1 AND state = 'planned' "
    "AND kind IN ('scheduled', 'triggered') AND scheduled_utc > ?2 AND scheduled_utc <= ?3)"
)


def unmet(spec: RevisionSpec, state: HostState) -> list[str]:
    """The conditions ``spec`` asks for that ``state`` does not meet."""
    missing = []
    if spec.on_ac_power and not state.on_ac_power():
        missing.append("on_ac_power")
    if spec.when_online and not state.online():
        missing.append("when_online")
    return missing


def inputs(spec: RevisionSpec, state: HostState) -> dict[str, Any]:
    """The conditions asked for and the state observed, as a decision records them."""
    observed: dict[str, Any] = {}
    if spec.on_ac_power:
        observed["power"], observed["power_source"] = state.power.value, state.power_source
    if spec.when_online:
        observed["network"], observed["network_source"] = state.network.value, state.network_source
    return observed


class Gate:
    """One pass's reading of the host — read the first time a condition asks, so most passes
    never read it — and the earliest moment a held wait ends."""

    def __init__(self, read: Callable[[], HostState]) -> None:
        self._read = read
        self._state: HostState | None = None
        self.wait_ends: datetime | None = None

    @property
    def state(self) -> HostState:
        if self._state is None:
            self._state = self._read()
        return self._state

    def holds(self, conn: apsw.Connection, item: Waiting, revision: Revision, stamp: Stamp) -> bool:
        """Whether a new run's occurrence must not start now: it waits (True, left planned)
        or, its wait over, is skipped (True, settled); False lets it go on. A person's run
        is not held; it records the state when a condition was unmet."""
        spec = revision.spec
        if not (spec.on_ac_power or spec.when_online):
            return False
        missing = unmet(spec, self.state)
        if not missing:
            return False
        observed = {**inputs(spec, self.state), "unmet": missing}
        if item.kind is OccurrenceKind.MANUAL or item.forced or item.probe:
            occurrences.note_decision(conn, item.id, {"conditions": observed})
            return False
        ends = None if spec.grace is None else item.scheduled + spec.grace
        if (ends is not None and stamp.now >= ends) or _superseded(conn, item, stamp.now):
            occurrences.skip(conn, item, SkipReason.CONDITION_UNMET, stamp, observed)
            return True
        if ends is not None and (self.wait_ends is None or ends < self.wait_ends):
            self.wait_ends = ends
        return True


def _superseded(conn: apsw.Connection, item: Waiting, now: datetime) -> bool:
    """Whether a later moment of the routine has come due: it waits in this one's place."""
    at, until = instant_text(item.scheduled), instant_text(now)
    return bool(scalar(conn, _LATER_MOMENT, (item.routine_id, at, until)))
