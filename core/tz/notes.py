"""Plain-language notes on what the DST policy decided for a moment.

Two renderings of the same facts: :func:`note` is stable English for ``--json`` and scripts,
:func:`localized_note` formats dates, times and offsets with Babel in the user's locale for
people (the sentences themselves go through gettext).
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo

from babel.dates import format_date, format_time

from coven_core.notation.i18n import _
from coven_core.tz.binding import BoundTime, LocalTimeKind
from coven_core.tz.transitions import Transition, transition_for


def format_offset(offset: timedelta) -> str:
    """``+HH:MM`` / ``-HH:MM`` (seconds are never shown; no real zone uses them today)."""
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{rest:02d}"


def note(moment: BoundTime, zone_key: str, zone: tzinfo, *, absolute: bool = False) -> str | None:
    """Stable English note for a nonexistent or repeated wall time (None for regular ones)."""
    return _render(moment, zone_key, zone, absolute, _IsoStyle())


def localized_note(
    moment: BoundTime, zone_key: str, zone: tzinfo, locale: str, *, absolute: bool = False
) -> str | None:
    """The same note for people: Babel-formatted in ``locale``, sentences translated."""
    return _render(moment, zone_key, zone, absolute, _BabelStyle(locale))


class _IsoStyle:
    locale: str | None = "en_US"

    def date(self, wall: datetime) -> str:
        return wall.strftime("%Y-%m-%d")

    def time(self, wall: datetime) -> str:
        return wall.strftime("%H:%M")


class _BabelStyle(_IsoStyle):
    def __init__(self, locale: str) -> None:
        self.locale = locale

    def date(self, wall: datetime) -> str:
        return format_date(wall.date(), format="full", locale=self.locale)

    def time(self, wall: datetime) -> str:
        return format_time(wall.time(), format="short", locale=self.locale)


def _render(
    moment: BoundTime, zone_key: str, zone: tzinfo, absolute: bool, style: _IsoStyle
) -> str | None:
    if moment.kind is LocalTimeKind.REGULAR:
        return None
    transition = transition_for(moment, zone)
    assert transition is not None and moment.other_offset is not None
    if moment.kind is LocalTimeKind.NONEXISTENT:
        return _gap(moment, zone_key, transition, style)
    if absolute:
        return _interval_fold(moment, zone_key, style)
    return _fold(moment, zone_key, style)


def _facts(moment: BoundTime, zone_key: str, style: _IsoStyle) -> dict[str, str]:
    assert moment.other_offset is not None
    return {
        "time": style.time(moment.local),
        "date": style.date(moment.local),
        "zone": zone_key,
        "first": "UTC" + format_offset(moment.offset),
        "second": "UTC" + format_offset(moment.other_offset),
    }


def _gap(moment: BoundTime, zone_key: str, transition: Transition, style: _IsoStyle) -> str:
    text = _(
        "{time} on {date} does not exist in {zone}: clocks jump from {jump_from} to {jump_to}. "
        "Skipped; Coven never moves a run to another time.",
        style.locale,
    )
    facts = _facts(moment, zone_key, style)
    return text.format(
        **facts,
        jump_from=style.time(transition.wall_before),
        jump_to=style.time(transition.wall_after),
    )


def _fold(moment: BoundTime, zone_key: str, style: _IsoStyle) -> str:
    text = _(
        "{time} on {date} happens twice in {zone}. Runs at the first ({first}), "
        "not again at the second ({second}).",
        style.locale,
    )
    return text.format(**_facts(moment, zone_key, style))


def _interval_fold(moment: BoundTime, zone_key: str, style: _IsoStyle) -> str:
    facts = _facts(moment, zone_key, style)
    if moment.fold == 1:
        text = _(
            "{time} on {date} happens twice in {zone}; this is the second ({first}). "
            "Interval schedules count absolute time, so both passes can have a run.",
            style.locale,
        )
    else:
        text = _(
            "{time} on {date} happens twice in {zone}; this is the first ({first}). "
            "Interval schedules count absolute time, so both passes can have a run.",
            style.locale,
        )
    return text.format(**facts)
