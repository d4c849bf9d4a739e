"""The two reads of the routines' shared state that a glance needs (``coven status``, the
tray's summary): whether scheduling is paused, and the earliest deadline.

They live apart from :mod:`coven_core.scheduling.routines` because that module loads the model (its
enums and dataclasses) and the time-zone binding, which a read-only command never uses; a
fresh ``coven status`` is mostly imports (issue #9)."""

from __future__ import annotations

from datetime import datetime

import apsw

from coven_core.store.codec import maybe_instant_from
from coven_core.store.query import scalar


def scheduling_paused(conn: apsw.Connection) -> bool:
    """Whether all scheduling is paused (``coven pause --all``)."""
    return bool(scalar(conn, f"SELECT {SCHEDULING_PAUSED}"))


def earliest_due(conn: apsw.Connection) -> datetime | None:
    """The soonest moment an active routine is due, if any."""
    return maybe_instant_from(scalar(conn, f"SELECT {EARLIEST_DUE}"))


# As SQL expressions too: a scheduler pass asks them within its other reads
# (``routines.due``, :mod:`coven_core.scheduling.agenda`) rather than as statements of their own.
SCHEDULING_PAUSED = "coalesce((SELECT paused FROM scheduler_state WHERE id = 1), 0)"
EARLIEST_DUE = (
    "(SELECT min(next_due) FROM routines WHERE state = 'active' AND next_due IS NOT NULL)"
)
