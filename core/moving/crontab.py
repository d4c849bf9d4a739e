"""Reading a user crontab (crontab(5)) into jobs Coven can import.

* Comments and blank lines are ignored; ``NAME=value`` lines (quotes allowed) apply as
  ``--env`` to the jobs below them — except ``MAILTO``/``MAILFROM`` (Coven mails nothing; the
  output is in the history) and ``SHELL`` other than ``/bin/sh``, reported by name.
* ``CRON_TZ=`` and ``TZ=`` set the zone of the jobs below; before them, ``--tz`` (the
  machine's zone, as cron uses) applies.
* Commands run through ``/bin/sh -c``, as cron runs them (``--shell``). In a command ``\\%``
  is a ``%``; an unescaped ``%`` ends the command and feeds the rest to its standard input,
  which Coven does not have: such a line is reported, not imported.
* ``@reboot`` is reported (no start-at-boot schedule); everything the cron dialect refuses
  (``L``, ``W``, ``#``, ``?``, seconds) is reported with the part named.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from coven_core.errors import ScheduleError, ZoneError
from coven_core.model import MisfirePolicy, RevisionSpec
from coven_core.moving.naming import slug_of_command
from coven_core.moving.plan import Found, NotImported
from coven_core.notation.i18n import N_, _
from coven_core.schedule.cron import CronSchedule, field_texts
from coven_core.tz import tzdb

_ENV_LINE = re.compile(r"""\s*(["']?)([A-Za-z_][A-Za-z0-9_]*)\1\s*=\s*(.*?)\s*$""")
_JOB_LINE = re.compile(r"\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(.*\S)\s*$")
_ALIAS_LINE = re.compile(r"\s*(@\w+)\s+(.*\S)\s*$")
_ZONE_NAMES = ("CRON_TZ", "TZ")
_NO_MAIL = N_("Coven does not mail a job's output; it keeps it in the routine's history")
_NOT_CARRIED = {"MAILTO": _NO_MAIL, "MAILFROM": _NO_MAIL}


@dataclass
class _Reading:
    """What the lines above the current one have set."""

    zone: str
    zone_error: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    found: list[Found] = field(default_factory=list)
    refused: list[NotImported] = field(default_factory=list)


def read_crontab(text: str, zone: str) -> tuple[list[Found], list[NotImported]]:
    """Every job and every refused line of a crontab; ``zone`` is the machine's."""
    reading = _Reading(zone)
    for number, line in _lines(text):
        source = _("line {number}").format(number=number)
        env = _ENV_LINE.fullmatch(line)
        if env:  # a job starts with a number, '*' or '@': never a variable's name
            where = (source, number)
            _setting(reading, where, line, env.group(2), _unquoted(env.group(3)))
        else:
            _job(reading, source, line, number)
    return reading.found, reading.refused


def _lines(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, line


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _setting(reading: _Reading, where: tuple[str, int], line: str, name: str, value: str) -> None:
    source, number = where
    if name in _ZONE_NAMES:
        _set_zone(reading, value)
    elif name in _NOT_CARRIED:
        why = f"{name}: {_(_NOT_CARRIED[name])}"
        reading.refused.append(NotImported(source, line.strip(), why, number))
    elif name == "SHELL" and value != "/bin/sh":
        why = _("SHELL: Coven runs commands with /bin/sh, not {value}").format(value=value)
        reading.refused.append(NotImported(source, line.strip(), why, number))
    else:
        reading.env[name] = value


def _set_zone(reading: _Reading, value: str) -> None:
    try:
        tzdb.zone(value)
    except ZoneError as error:
        reading.zone_error = _("its zone {value!r} is not an IANA zone ({error})").format(
            value=value, error=error
        )
        return
    reading.zone, reading.zone_error = value, None


def _job(reading: _Reading, source: str, line: str, number: int) -> None:
    text = line.strip()
    try:
        fields, command = _split_job(text)
        if reading.zone_error:
            raise ScheduleError(reading.zone_error)
        schedule = str(CronSchedule.parse(fields))
        command = _command(command)
    except ScheduleError as error:
        reading.refused.append(NotImported(source, text, str(error), number))
        return
    spec = RevisionSpec(
        schedule=schedule,
        timezone=reading.zone,
        argv=(command,),
        shell=True,
        env=tuple(sorted(reading.env.items())),
        misfire=MisfirePolicy.SKIP_MISSED,  # cron runs nothing it missed while down
    )
    found = Found(source, slug_of_command(command), spec, _wildcard(fields), line=number)
    reading.found.append(found)


def _split_job(text: str) -> tuple[str, str]:
    alias = _ALIAS_LINE.fullmatch(text)
    if alias:
        if alias.group(1).lower() == "@reboot":
            raise ScheduleError(_("@reboot: Coven has no run-at-start schedule"))
        return alias.group(1), alias.group(2)
    job = _JOB_LINE.fullmatch(text)
    if not job:
        raise ScheduleError(_("neither a job (5 time fields and a command) nor NAME=value"))
    return " ".join(job.groups()[:5]), job.group(6)


def _command(command: str) -> str:
    """``\\%`` becomes ``%``; an unescaped ``%`` is refused (it would be standard input)."""
    out: list[str] = []
    index = 0
    while index < len(command):
        char = command[index]
        if char == "\\" and command[index + 1 : index + 2] == "%":
            out.append("%")
            index += 2
            continue
        if char == "%":
            raise ScheduleError(
                _(
                    "an unescaped % sends the rest of the line to the command's standard input,"
                    " which Coven does not give commands (write \\% for a literal %)"
                )
            )
        out.append(char)
        index += 1
    return "".join(out)


def _wildcard(fields: str) -> bool:
    """cron(8)'s "wildcard" job: its minute or hour field starts with '*'."""
    minute, hour, *_ = field_texts(fields)
    return minute.startswith("*") or hour.startswith("*")
