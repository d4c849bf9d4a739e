"""Exporting a routine as a systemd ``.service`` and ``.timer`` for a headless machine.

``OnCalendar=`` carries the schedule with its zone (an either-day cron becomes two lines),
``Persistent=`` the misfire policy (latest_only → true: the latest missed moment runs once;
skip_missed → false), ``TimeoutStartSec=`` the timeout that applies, ``TimeoutStopSec=`` the
stop grace. RRULE and interval schedules have no ``OnCalendar=`` form here: refused.
"""

from __future__ import annotations

import re

from coven_core.errors import ScheduleError
from coven_core.model import MisfirePolicy, RevisionSpec
from coven_core.moving.export import Rendered, Routine, common_notes
from coven_core.moving.oncalendar import oncalendar_lines
from coven_core.notation.durations import NO_TIMEOUT
from coven_core.notation.i18n import _
from coven_core.schedule.timetable import ScheduleKind, classify

_PLAIN = re.compile(r"[A-Za-z0-9_@+=:,./-]+")
_UNIT_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def unit_name(routine: str) -> str:
    return "coven-" + (_UNIT_NAME.sub("-", routine).strip("-") or "routine")


def render_systemd(routine: Routine) -> Rendered:
    spec = routine.spec
    name = unit_name(routine.name)
    calendars = _calendars(spec)
    notes = common_notes(routine)
    if spec.grace is not None and spec.misfire is MisfirePolicy.LATEST_ONLY:
        notes.append(
            _("grace {grace}: Persistent= runs a missed moment however late").format(
                grace=spec.grace
            )
        )
    if routine.paused:
        notes.append(_("the routine is paused: enable the timer when you resume it"))
    files = {f"{name}.service": _service(routine), f"{name}.timer": _timer(routine, calendars)}
    return Rendered(files, tuple(notes))


def _calendars(spec: RevisionSpec) -> list[str]:
    kind, body = classify(spec.schedule)
    if kind is ScheduleKind.CRON:
        return oncalendar_lines(body, spec.timezone)
    if kind is ScheduleKind.ONCE:
        return [f"{body.replace('T', ' ')}:00 {spec.timezone}"]
    raise ScheduleError(
        _("{schedule}: a {kind} schedule has no OnCalendar= form").format(
            schedule=spec.schedule, kind=kind.value
        )
    )


def _service(routine: Routine) -> str:
    spec = routine.spec
    argv = ["/bin/sh", "-c", spec.argv[0]] if spec.shell else list(spec.argv)
    lines = [
        "[Unit]",
        f"Description=Coven routine {routine.name} (coven export systemd)",
        "",
        "[Service]",
        "Type=oneshot",
        "ExecStart=" + " ".join(_quoted(word) for word in argv),
        f"TimeoutStartSec={_seconds(routine)}",
        f"TimeoutStopSec={int(spec.stop_grace.total_seconds())}",
    ]
    if spec.cwd:
        lines.append(f"WorkingDirectory={_escaped(spec.cwd, dollar=False)}")
    # Environment= expands %-specifiers but not $VARIABLES (systemd.exec(5)).
    lines.extend(
        f"Environment={_quoted(f'{key}={value}', dollar=False)}" for key, value in spec.env
    )
    return "\n".join(lines) + "\n"


def _timer(routine: Routine, calendars: list[str]) -> str:
    persistent = routine.spec.misfire is MisfirePolicy.LATEST_ONLY
    lines = [
        "[Unit]",
        f"Description=Coven routine {routine.name} (coven export systemd)",
        "",
        "[Timer]",
        *(f"OnCalendar={calendar}" for calendar in calendars),
        f"Persistent={'true' if persistent else 'false'}",
        "AccuracySec=1s",
        "",
        "[Install]",
        "WantedBy=timers.target",
    ]
    return "\n".join(lines) + "\n"


def _seconds(routine: Routine) -> str:
    if routine.timeout is None or routine.timeout == NO_TIMEOUT:
        return "infinity"
    return str(int(routine.timeout.total_seconds()))


def _escaped(text: str, *, dollar: bool = True) -> str:
    """systemd expands %-specifiers everywhere and $ in ExecStart: both written doubled."""
    text = text.replace("%", "%%")
    return text.replace("$", "$$") if dollar else text


def _quoted(word: str, *, dollar: bool = True) -> str:
    if _PLAIN.fullmatch(word):
        return _escaped(word, dollar=dollar)
    inner = word.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{_escaped(inner, dollar=dollar)}"'
