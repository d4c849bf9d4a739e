"""What the Routines window shows of each routine, read on the operator thread.

This module gathers each routine's view and names its zone for people (Babel). The schedule
in words is the engine's (:mod:`coven_core.schedule.words`) and is text for a cell: it is
worded on the GUI thread when its cell is first asked for, so only the rows in view are, and
kept per revision and locale.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from babel.dates import format_datetime, get_timezone_name

from coven_core import queries
from coven_core.engine import Engine
from coven_core.model import Revision, RoutineState
from coven_core.queries import RoutineView, _, describe_timetable, list_routines
from coven_desktop.windows.common import relative

#: Babel names UTC "Unknown Region (UTC) Time" (see PLATFORM_NOTES): these keys are named here.
_UTC_KEYS = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "Zulu"})
_JUST_NOW = timedelta(minutes=1)


@dataclass(frozen=True)
class RoutineRow:
    view: RoutineView
    zone: str  # "Central European Time (Europe/Berlin)"
    after: str | None = None  # "after backup": a routine only its upstream runs (its next run)

    def words(self, locale: str) -> str:
        """The schedule in words ("Every day at 2:30 AM"), or why it cannot be read."""
        revision = self.view.revision
        if self.view.broken is not None or revision is None:
            return self.view.broken or ""
        return self.after or schedule_words(revision, locale)

    @property
    def name(self) -> str:
        return self.view.routine.name

    @property
    def state(self) -> RoutineState:
        return self.view.routine.state

    @property
    def zone_key(self) -> str:
        return self.view.zone


def load_rows(engine: Engine, locale: str) -> list[RoutineRow]:
    """Every live routine as a row (call on the operator thread)."""
    return [row_for(view, locale) for view in list_routines(engine.store)]


def row_for(view: RoutineView, locale: str) -> RoutineRow:
    if view.broken is not None or view.revision is None:  # its schedule cannot be read
        stored = "—" if view.revision is None else view.revision.spec.timezone
        return RoutineRow(view, stored)
    after = queries.after_only(view.revision.spec, locale)
    return RoutineRow(view, zone_label(view.revision.spec.timezone, locale), after)


# Wording every routine's schedule at each reload was most of the Routines page's first
# paint (bench_routines_page, "first paint"): a cell is worded when shown, once per revision
# and locale. A revision never changes (an edit makes a new one, hence a new key), and its
# sentence depends on nothing else — not on the day, unlike the next run's words, which are
# made afresh at each paint. Keyed by the whole revision, not its schedule text: an RRULE's
# sentence can depend on its anchor.
@lru_cache(maxsize=4096)
def schedule_words(revision: Revision, locale: str) -> str:
    """A bound revision's schedule in words (call only for a revision that binds)."""
    return describe_timetable(queries.timetable(revision), locale)


@lru_cache(maxsize=256)  # a handful of zones, shared by many routines: named once a locale
def zone_label(key: str, locale: str) -> str:
    """The zone's name in ``locale`` with its IANA key, which is what the routine stores."""
    if key in _UTC_KEYS:
        name = _("Coordinated Universal Time", locale)
    else:
        name = get_timezone_name(queries.zone(key), width="long", locale=locale)
    return f"{name} ({key})"


def instant_text(at: datetime, zone_key: str, locale: str) -> str:
    """An instant as the wall time in the routine's zone, with the zone's key."""
    wall = format_datetime(at, format="medium", tzinfo=queries.zone(zone_key), locale=locale)
    return f"{wall} ({zone_key})"


def ago(at: datetime, now: datetime, locale: str) -> str:
    """ "2 hours ago", "in 5 minutes"; "just now" rather than "in 0 seconds"."""
    if abs(at - now) < _JUST_NOW:
        return _("just now", locale)
    return relative(at, now, locale)
