"""Importing a systemd ``.timer`` and the ``.service`` beside it.

Carried over: ``OnCalendar=`` (one value, in the part cron can say, with its trailing zone),
``Persistent=`` (true: the latest missed moment runs once → ``latest_only``; false, the
default: ``skip_missed``), and from the service ``ExecStart=`` (one command, no ``$`` or
``%`` expansion), ``WorkingDirectory=`` and ``Environment=``. Everything else either refuses
the import (monotonic timers, several ``OnCalendar=``) or is named as not carried over.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from coven_core.errors import ScheduleError, ValidationError
from coven_core.model import MisfirePolicy, RevisionSpec
from coven_core.moving.oncalendar import cron_of
from coven_core.moving.plan import Found, NotImported
from coven_core.moving.unitfile import Unit, read_unit, values
from coven_core.notation.i18n import _

_MONOTONIC = ("OnActiveSec", "OnBootSec", "OnStartupSec", "OnUnitActiveSec", "OnUnitInactiveSec")
_TIMER_KEYS = frozenset({"OnCalendar", "Persistent", "Unit", *_MONOTONIC})
_SERVICE_KEYS = frozenset({"ExecStart", "WorkingDirectory", "Environment", "Type"})


def read_timer(path: Path, zone: str) -> tuple[list[Found], list[NotImported]]:
    """The timer's one job, or why it cannot be imported."""
    try:
        return [_found(path, zone)], []
    except (ValidationError, OSError, UnicodeDecodeError) as error:  # not text: not a unit
        return [], [NotImported(path.name, path.name, str(error))]


def _found(path: Path, zone: str) -> Found:
    timer = read_unit(path)
    calendar = _calendar(timer)
    cron, own_zone = cron_of(calendar)
    service_path = _service_path(path, timer)
    service = read_unit(service_path)
    argv = _argv(service)
    spec = RevisionSpec(
        schedule=cron,
        timezone=own_zone or zone,
        argv=argv,
        cwd=_one_of(service, "Service", "WorkingDirectory"),
        env=_environment(service),
        misfire=_misfire(timer),
    )
    notes = (*_others(timer, "Timer", _TIMER_KEYS), *_others(service, "Service", _SERVICE_KEYS))
    return Found(path.name, path.stem, spec, notes=tuple(notes))


def _calendar(timer: Unit) -> str:
    for key in _MONOTONIC:
        if values(timer, "Timer", key):
            raise ScheduleError(
                _("{key}= counts from boot or activation; Coven has no such time").format(key=key)
            )
    calendars = values(timer, "Timer", "OnCalendar")
    if len(calendars) != 1:
        raise ScheduleError(
            _("{count} OnCalendar= values; Coven takes exactly one").format(count=len(calendars))
        )
    return calendars[0]


def _service_path(timer_path: Path, timer: Unit) -> Path:
    named = values(timer, "Timer", "Unit")
    return timer_path.with_name(named[-1] if named else timer_path.stem + ".service")


def _argv(service: Unit) -> tuple[str, ...]:
    commands = values(service, "Service", "ExecStart")
    if len(commands) != 1:
        raise ValidationError(
            _("{count} ExecStart= lines; Coven runs exactly one command").format(
                count=len(commands)
            )
        )
    command = commands[0]
    if command[:1] in "-@:+!":
        raise ValidationError(
            _("ExecStart={command}: the prefix {prefix!r} has no equivalent").format(
                command=command, prefix=command[0]
            )
        )
    if "$" in command or "%" in command:
        raise ValidationError(
            _(
                "ExecStart={command}: systemd expands $VARIABLES and %-specifiers; Coven runs"
                " the command as written"
            ).format(command=command)
        )
    return tuple(shlex.split(command))


def _environment(service: Unit) -> tuple[tuple[str, str], ...]:
    pairs = {}
    for value in values(service, "Service", "Environment"):
        for word in shlex.split(value):
            name, _equals, text = word.partition("=")
            pairs[name] = text
    return tuple(sorted(pairs.items()))


def _misfire(timer: Unit) -> MisfirePolicy:
    persistent = (_one_of(timer, "Timer", "Persistent") or "false").lower()
    on = persistent in ("1", "yes", "true", "on")
    return MisfirePolicy.LATEST_ONLY if on else MisfirePolicy.SKIP_MISSED


def _one_of(unit: Unit, section: str, key: str) -> str | None:
    found = values(unit, section, key)
    return found[-1] if found else None


def _others(unit: Unit, section: str, known: frozenset[str]) -> list[str]:
    return [
        f"[{section}] {key}={value}"
        + (_(": Coven starts on the moment itself") if key == "RandomizedDelaySec" else "")
        for key, value in unit.get(section, [])
        if key not in known
    ]
