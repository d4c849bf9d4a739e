"""An import's dry run: the routines it would create, the lines it cannot import and why,
and each routine's DST differences in the coming year — and applying it (§15).

Applying goes through the operator's normal add path, one audited command per routine.
Every name is checked against the store first, so a clash creates nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coven_core.errors import CovenError
from coven_core.model import RevisionSpec
from coven_core.moving.dst_differences import DstDifference, Scheduler, differences
from coven_core.moving.naming import unique
from coven_core.notation.i18n import _, ngettext
from coven_core.notation.utc import utc_text
from coven_core.operations.definitions import validated
from coven_core.operations.routine_names import check_name
from coven_core.schedule.timetable import Timetable
from coven_core.schedule.words import describe_timetable
from coven_core.tz.local import resolve_zone_key

if TYPE_CHECKING:
    from coven_core.operator import Operator

#: "the coming year" of the DST report
YEAR = timedelta(days=365)


@dataclass(frozen=True)
class Found:
    """One job a source defines, before it is named and checked."""

    source: str  # where it was read: "line 12", "backup.timer"
    name: str  # the wanted name (a slug of the command, or launchd's Label)
    spec: RevisionSpec
    wildcard: bool = False  # cron: a '*' starts the minute or hour field
    notes: tuple[str, ...] = ()  # what of this job does not carry over
    line: int = 0  # a crontab's line number (the order refusals are listed in); 0: a file


@dataclass(frozen=True)
class NotImported:
    source: str
    text: str
    why: str
    line: int = 0  # as Found.line

    def to_json(self) -> dict[str, str]:
        return {"source": self.source, "text": self.text, "why": self.why}


@dataclass(frozen=True)
class PlannedRoutine:
    name: str
    spec: RevisionSpec
    source: str
    notes: tuple[str, ...]
    differences: tuple[DstDifference, ...]
    zone: str  # the IANA key it binds to: ``local`` resolved once, when it was planned

    def to_json(self) -> dict[str, Any]:
        spec = self.spec
        return {
            "name": self.name,
            "source": self.source,
            "schedule": spec.schedule,
            "timezone": spec.timezone,
            "argv": list(spec.argv),
            "shell": spec.shell,
            "cwd": spec.cwd,
            "env": dict(spec.env),
            "misfire": spec.misfire.value,
            "not_carried_over": list(self.notes),
            "dst_differences": [d.to_json() | {"sentence": d.sentence} for d in self.differences],
        }


@dataclass(frozen=True)
class ImportPlan:
    origin: Scheduler
    start: datetime
    end: datetime
    routines: tuple[PlannedRoutine, ...]
    not_imported: tuple[NotImported, ...]

    def to_json(self, applied: bool) -> dict[str, Any]:
        return {
            "from": self.origin.value,
            "applied": applied,
            "dst_window": [utc_text(self.start), utc_text(self.end)],
            "routines": [routine.to_json() for routine in self.routines],
            "not_imported": [item.to_json() for item in self.not_imported],
        }

    def lines(self, applied: bool) -> list[str]:
        """The dry run (or what was done) in words, one routine or refusal per line."""
        count, origin = len(self.routines), self.origin.value
        if applied:
            head = ngettext("created {count} routine from {origin}:",
                            "created {count} routines from {origin}:", count)  # fmt: skip
        else:
            head = ngettext("would create {count} routine from {origin}:",
                            "would create {count} routines from {origin}:", count)  # fmt: skip
        out = [head.format(count=count, origin=origin)]
        for routine in self.routines:
            out.append(f"  {routine.name}: {_summary(routine.spec)}  ({routine.source})")
            out.extend(notes_lines(routine.notes, routine.differences))
        if self.not_imported:
            out.append(_("not imported ({count}):").format(count=len(self.not_imported)))
            out.extend(f"  {i.source}: {i.text!r}: {i.why}" for i in self.not_imported)
        if not applied:
            out.append(_("nothing was changed; run again with --apply to create these routines"))
        return out


def notes_lines(notes: Iterable[str], found: Iterable[DstDifference]) -> list[str]:
    """A routine's indented lines: what does not carry over, and each DST difference."""
    lines = [_("not carried over: {note}").format(note=note) for note in notes]
    lines += [_("DST: {sentence}").format(sentence=d.sentence) for d in found]
    return ["    " + line for line in lines]


def _summary(spec: RevisionSpec) -> str:
    command = spec.argv[0] if spec.shell else " ".join(spec.argv)
    shell = "sh -c " if spec.shell else ""
    return _("{schedule} in {zone}: {command}").format(
        schedule=spec.schedule, zone=spec.timezone, command=shell + command
    )


def build_plan(
    origin: Scheduler,
    found: Iterable[Found],
    not_imported: Iterable[NotImported],
    start: datetime,
    end: datetime,
) -> ImportPlan:
    """Name, check and explain each job; a job Coven cannot take is listed, not dropped."""
    planned: list[PlannedRoutine] = []
    refused = list(not_imported)
    for job in found:
        try:
            planned.append(_planned(origin, job, [p.name for p in planned], start, end))
        except CovenError as error:
            refused.append(NotImported(job.source, job.spec.schedule, str(error), job.line))
    refused.sort(key=lambda item: item.line)  # stable: a file's own order otherwise
    return ImportPlan(origin, start, end, tuple(planned), tuple(refused))


def _planned(
    origin: Scheduler, job: Found, taken: list[str], start: datetime, end: datetime
) -> PlannedRoutine:
    name = unique(job.name, taken)
    check_name(name)  # what --apply would refuse, the dry run refuses: nothing half-made
    validated(name, job.spec)
    key = resolve_zone_key(job.spec.timezone)
    timetable = Timetable.build(job.spec.schedule, key, start)
    spec = replace(job.spec, schedule=timetable.spec)
    found = differences(timetable, origin, start, end, wildcard=job.wildcard)
    return PlannedRoutine(name, spec, job.source, job.notes, found, key)


def schedule_words(routine: PlannedRoutine, start: datetime, locale: str) -> str:
    """The routine's schedule as the Routines page will say it once it is created, with the
    zone it will run in: "Every day at 2:30 AM (Europe/Berlin)"; for ``local``, "… (this
    computer's zone, Etc/UTC)", the key the routine is bound to and keeps (DESIGN §3)."""
    spec, key = routine.spec, routine.zone
    words = describe_timetable(Timetable.build(spec.schedule, key, start), locale)
    if spec.timezone.strip().lower() == "local":
        return _("{schedule} (this computer's zone, {zone})", locale).format(
            schedule=words, zone=key
        )
    return _("{schedule} ({zone})", locale).format(schedule=words, zone=key)


def import_preview(origin: Scheduler, source: Path | str, zone: str, start: datetime) -> ImportPlan:
    """The dry run of importing ``source`` (a file, or a crontab's text), with the DST
    differences of the year from ``start``."""
    from coven_core.moving.sources import read_jobs

    found, refused = read_jobs(origin, source, zone)
    return build_plan(origin, found, refused, start, start + YEAR)


def apply_plan(plan: ImportPlan, operator: Operator) -> list[str]:
    """Create every planned routine (see :meth:`Operator.import_routines`)."""
    return operator.import_routines([(routine.name, routine.spec) for routine in plan.routines])
