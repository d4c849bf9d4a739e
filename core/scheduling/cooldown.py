"""Cooldown: after a failed occurrence, a routine rests before its next scheduled run
(DESIGN §14).

The rest is the revision's cooldown after the first failure in a row, and doubles with each
further one, up to its cap; it runs from the moment the last failure settled. A success
resets it (the count of failures in a row is the quarantine's: ``consecutive_failures``).
A scheduled moment whose claim falls inside the rest is skipped with reason ``cooldown``
and the rest's end; a person's "run now" is not held back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import apsw

from coven_core.model import RevisionSpec
from coven_core.store.codec import instant_from, instant_text

#: The longest rest when the revision sets no cap: doubling stops at a day.
DEFAULT_CAP = timedelta(days=1)

_LAST_FAILURE = (
    "SELECT r.consecutive_failures, (SELECT max(o.settled_at) FROM occurrences o "
    "WHERE o.routine_id = r.id AND o.probe = 0 AND o.disposition IN ('failed', 'timed_out')) "
    "FROM routines r WHERE r.id = ?"
)


@dataclass(frozen=True)
class Cooldown:
    """A routine's rest after its failures in a row."""

    failures: int
    last_failure: datetime
    length: timedelta

    @property
    def until(self) -> datetime:
        return self.last_failure + self.length

    def inputs(self) -> dict[str, Any]:
        return {
            "until": instant_text(self.until), "failures": self.failures,
            "seconds": self.length.total_seconds(), "last_failure": instant_text(self.last_failure),
        }  # fmt: skip


def rest(spec: RevisionSpec, failures: int) -> timedelta:
    """The cooldown after ``failures`` (≥ 1) failed occurrences in a row."""
    assert spec.cooldown is not None
    cap = max(spec.cooldown_max or DEFAULT_CAP, spec.cooldown)
    doublings = min(max(failures - 1, 0), 32)  # 2**32 times any cooldown is past every cap
    return min(spec.cooldown * (1 << doublings), cap)


def active(
    conn: apsw.Connection, routine_id: str, spec: RevisionSpec, now: datetime
) -> Cooldown | None:
    """The routine's cooldown if ``now`` lies inside it; None otherwise, or without one."""
    if spec.cooldown is None:
        return None
    row = conn.execute(_LAST_FAILURE, (routine_id,)).fetchone()
    failures, last = (0, None) if row is None else row
    if not failures or last is None:
        return None
    found = Cooldown(int(failures), instant_from(last), rest(spec, int(failures)))
    return found if now < found.until else None
