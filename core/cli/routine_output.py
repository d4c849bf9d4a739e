"""Routines for people: the list as a table, one routine in detail."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from coven_core.cli.durations import format_duration
from coven_core.cli.output import print_fields, print_table
from coven_core.cli.times import maybe_local_text
from coven_core.model import Revision
from coven_core.notation.durations import format_timeout
from coven_core.notation.i18n import N_, _, user_locale
from coven_core.notation.reasons import reason_text
from coven_core.queries import RoutineView
from coven_core.views.policies import after_only, policy_fields


def print_routines(views: Sequence[RoutineView]) -> None:
    locale = user_locale()
    if not views:
        print(_("No routines yet. Add one with: coven routine add NAME ...", locale))
        return
    words = (N_("Name"), N_("State"), N_("Schedule"), N_("Zone"), N_("Next"), N_("Last"))
    headers = [_(word, locale) for word in words]
    print_table(headers, [_list_row(view, locale) for view in views])
    for view in views:
        if view.broken:
            print(f"{view.routine.name}: {view.broken}")


def _list_row(view: RoutineView, locale: str) -> list[str]:
    routine, revision = view.routine, view.revision
    on_trial = view.state == "active" and revision is not None and revision.spec.shadow
    return [
        routine.name,
        f"{view.state} (shadow)" if on_trial else view.state,  # state keys, as --shadow says
        "—" if revision is None else _schedule(revision, locale),
        "—" if revision is None else revision.spec.timezone,
        _next(view, locale),
        view.last_disposition or "—",
    ]


def print_routine(view: RoutineView) -> None:
    locale = user_locale()
    routine, revision = view.routine, view.revision
    reason = view.broken or view.state_reason
    state = view.state + (f" ({reason_text(reason, locale)})" if reason else "")  # the key, and why
    last = view.last_disposition or "—"
    if view.last_at is not None:
        last += " · " + maybe_local_text(view.last_at, view.zone, locale)
    fields = [(_("Name", locale), routine.name), (_("State", locale), state)]
    if revision is not None:
        fields += _revision_fields(revision, locale)
    fields += [
        (_("Next", locale), _next(view, locale)),
        (_("Last", locale), last),
    ]
    print_fields(fields)


def _next(view: RoutineView, locale: str) -> str:
    """A routine that is not active (broken, paused, quarantined) has no next run, whatever
    its row last said: the State column says why."""
    chained = None if view.revision is None else after_only(view.revision.spec, locale)
    if chained is not None and view.state == "active":
        return chained
    return maybe_local_text(view.next_due, view.zone, locale)


def _schedule(revision: Revision, locale: str) -> str:
    return after_only(revision.spec, locale) or revision.spec.schedule


def _revision_fields(revision: Revision, locale: str) -> list[tuple[str, str]]:
    spec = revision.spec
    return [
        (_("Schedule", locale), _schedule(revision, locale)),
        (_("Time zone", locale), f"{spec.timezone} ({spec.zone_source})"),
        (_("Revision", locale), f"{revision.number} · tzdb {revision.tzdb_version}"),
        (_("Misfire", locale), f"{spec.misfire.value} · grace {format_duration(spec.grace)}"),
        (_("Overlap", locale), spec.overlap.value),
        (_("Timeout", locale), format_timeout(spec.timeout)),
        (_("Retries", locale), f"{spec.retries}" + (" · idempotent" if spec.idempotent else "")),
        (_("Command", locale), shlex.join(spec.argv)),
        (_("Directory", locale), spec.cwd or "—"),
        (_("Environment", locale), " ".join(key for key, _value in spec.env) or "—"),
        *policy_fields(spec, locale),
    ]
