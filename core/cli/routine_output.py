"""Routines for people: the list as a table, one routine in detail."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from coven_core.cli.durations import format_duration
from coven_core.cli.output import print_fields, print_table
from coven_core.cli.times import maybe_local_text
from coven_core.durations import format_timeout
from coven_core.i18n import _, user_locale
from coven_core.queries import RoutineView


def print_routines(views: Sequence[RoutineView]) -> None:
    locale = user_locale()
    if not views:
        print(_("No routines yet. Add one with: coven routine add NAME ...", locale))
        return
    headers = [_(word, locale) for word in ("Name", "State", "Schedule", "Zone", "Next", "Last")]
    print_table(headers, [_list_row(view, locale) for view in views])


def _list_row(view: RoutineView, locale: str) -> list[str]:
    routine, zone = view.routine, view.revision.spec.timezone
    return [
        routine.name,
        routine.state.value,
        view.revision.spec.schedule,
        zone,
        maybe_local_text(routine.next_due, zone, locale),
        view.last_disposition or "—",
    ]


def print_routine(view: RoutineView) -> None:
    locale = user_locale()
    routine, revision, spec = view.routine, view.revision, view.revision.spec
    state = routine.state.value + (f" ({routine.state_reason})" if routine.state_reason else "")
    last = view.last_disposition or "—"
    if view.last_at is not None:
        last += " · " + maybe_local_text(view.last_at, spec.timezone, locale)
    fields = [
        (_("Name", locale), routine.name),
        (_("State", locale), state),
        (_("Schedule", locale), spec.schedule),
        (_("Time zone", locale), f"{spec.timezone} ({spec.zone_source})"),
        (_("Revision", locale), f"{revision.number} · tzdb {revision.tzdb_version}"),
        (_("Misfire", locale), f"{spec.misfire.value} · grace {format_duration(spec.grace)}"),
        (_("Overlap", locale), spec.overlap.value),
        (_("Timeout", locale), format_timeout(spec.timeout)),
        (_("Retries", locale), f"{spec.retries}" + (" · idempotent" if spec.idempotent else "")),
        (_("Command", locale), shlex.join(spec.argv)),
        (_("Directory", locale), spec.cwd or "—"),
        (_("Environment", locale), " ".join(key for key, _value in spec.env) or "—"),
        (_("Next", locale), maybe_local_text(routine.next_due, spec.timezone, locale)),
        (_("Last", locale), last),
    ]
    print_fields(fields)
