"""What the Routines window shows of each routine, read on the operator thread.

The schedule in words is the engine's (:mod:`coven_core.schedule.words`); this module only
gathers it with the routine's view and names its zone for people (Babel), so that the item
model never computes anything on the GUI thread but text for a cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from babel.dates import format_datetime, get_timezone_name

from coven_core import queries
from coven_core.engine import Engine
from coven_core.model import RoutineState
from coven_core.queries import RoutineView, _, describe_timetable, list_routines
from coven_desktop.windows.common import relative

#: Babel names UTC "Unknown Region (UTC) Time" (see PLATFORM_NOTES): these keys are named here.
_UTC_KEYS = frozenset({"UTC", "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "Zulu"})
_JUST_NOW = timedelta(minutes=1)


@dataclass(frozen=True)
class RoutineRow:
    view: RoutineView
    words: str  # the schedule in words, in the locale it was read for
    zone: str  # "Central European Time (Europe/Berlin)"
    after: str | None = None  # "after backup": a routine only its upstream runs (its next run)

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
        return RoutineRow(view, view.broken or "", stored)
    after = queries.after_only(view.revision.spec, locale)
    words = after or describe_timetable(queries.timetable(view.revision), locale)
    return RoutineRow(view, words, zone_label(view.revision.spec.timezone, locale), after)


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
