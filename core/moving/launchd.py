"""Importing a launchd job (launchd.plist(5)): ``Label`` as the name, ``ProgramArguments``
(or ``Program``), ``WorkingDirectory``, ``EnvironmentVariables`` and
``StartCalendarInterval`` — a dict or an array of dicts of Minute, Hour, Day, Weekday and
Month, where a missing key is a wildcard (so ``{Hour: 2}`` is every minute of 02:00–02:59,
as launchd runs it). An array becomes one cron spec when its dicts differ in one key only;
otherwise it is refused. launchd runs a job missed in sleep once on wake: ``latest_only``.
"""

from __future__ import annotations

import plistlib
from pathlib import Path
from typing import Any

from coven_core.errors import ScheduleError, ValidationError
from coven_core.model import MisfirePolicy, RevisionSpec
from coven_core.moving.plan import Found, NotImported
from coven_core.notation.i18n import _

_FIELDS = ("Minute", "Hour", "Day", "Month", "Weekday")  # cron's order
_CARRIED = frozenset({"Label", "Program", "ProgramArguments", "WorkingDirectory",
                      "EnvironmentVariables", "StartCalendarInterval"})  # fmt: skip


def read_plist(path: Path, zone: str) -> tuple[list[Found], list[NotImported]]:
    try:
        with path.open("rb") as stream:
            job = plistlib.load(stream)
        return [_found(path, job, zone)], []
    except (ValidationError, OSError, plistlib.InvalidFileException) as error:
        return [], [NotImported(path.name, path.name, str(error))]


def _found(path: Path, job: dict[str, Any], zone: str) -> Found:
    label = str(job.get("Label") or path.stem)
    argv = job.get("ProgramArguments") or ([job["Program"]] if "Program" in job else [])
    if "StartCalendarInterval" not in job:
        raise ScheduleError(_("no StartCalendarInterval: nothing to schedule"))
    spec = RevisionSpec(
        schedule=_cron(job["StartCalendarInterval"]),
        timezone=zone,
        argv=tuple(str(word) for word in argv),
        cwd=job.get("WorkingDirectory"),
        env=tuple(sorted((str(k), str(v)) for k, v in job.get("EnvironmentVariables", {}).items())),
        misfire=MisfirePolicy.LATEST_ONLY,
    )
    notes = tuple(f"{key}" for key in job if key not in _CARRIED)
    return Found(path.name, label, spec, notes=notes)


def _cron(interval: dict[str, int] | list[dict[str, int]]) -> str:
    intervals = interval if isinstance(interval, list) else [interval]
    if not intervals:
        raise ScheduleError(_("StartCalendarInterval is an empty array"))
    fields = []
    for key in _FIELDS:
        seen = {_value(item, key) for item in intervals}
        fields.append(seen)
    varying = [key for key, seen in zip(_FIELDS, fields, strict=True) if len(seen) > 1]
    if len(varying) > 1:
        raise ScheduleError(
            _(
                "StartCalendarInterval: {count} dicts differ in {keys}; one cron spec says them"
                " only when they differ in one key"
            ).format(count=len(intervals), keys=", ".join(varying))
        )
    return " ".join(_field(seen) for seen in fields)


def _value(item: dict[str, int], key: str) -> str:
    unknown = set(item) - set(_FIELDS)
    if unknown:
        raise ScheduleError(
            _("StartCalendarInterval: unknown key {key!r}").format(key=sorted(unknown)[0])
        )
    if key not in item:
        return "*"
    value = int(item[key])
    return str(0 if key == "Weekday" and value == 7 else value)


def _field(seen: set[str]) -> str:
    if "*" in seen:
        return "*"  # a wildcard in one dict covers the others
    return ",".join(sorted(seen, key=int))
