"""What the host told us about time, recorded, and the routines a zone change concerns.

Sleep and clock steps are recorded by the scheduler's own pass (``coven_core.scheduling.watch``),
which
also sees them when no notification arrives. A host time-zone change is recorded here; the
routines that were created as ``local`` keep their zone until a person chooses, per routine,
to keep it or to follow the host (DESIGN §3) — following creates a new revision.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

import apsw

from coven_core import events
from coven_core.events import EventKind
from coven_core.model import RevisionSpec, Routine
from coven_core.scheduling import routines
from coven_core.store.store import Store

FOLLOWED = "local: followed the host"


@dataclass(frozen=True)
class ZoneChoice:
    """A routine created as ``local`` whose zone is no longer the host's."""

    routine: str
    kept_zone: str
    host_zone: str


def record_zone_change(store: Store, now: datetime, old: str | None, new: str) -> list[ZoneChoice]:
    """Record the change; the routines a person should be asked about."""
    with store.write() as conn:
        events.record(conn, now, EventKind.TIMEZONE_CHANGED, old=old, new=new)
        return [
            ZoneChoice(view.name, zone, new)
            for view, zone, source in _live_zones(conn)
            if source.startswith("local") and zone != new
        ]


def _live_zones(conn: apsw.Connection) -> list[tuple[Routine, str, str]]:
    found = []
    for routine in routines.live(conn):
        spec = routines.current_revision(conn, routine).spec
        found.append((routine, spec.timezone, spec.zone_source))
    return found


def follow(spec: RevisionSpec, zone: str) -> RevisionSpec:
    """The edit that makes a routine follow the host to ``zone`` (a new revision)."""
    return replace(spec, timezone=zone, zone_source=FOLLOWED)
