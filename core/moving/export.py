"""An export: per routine the files for the other system, what does not carry over, and each
moment of the coming year where that system's DST behaviour differs from Coven's (§15).

A routine the target cannot express is refused by name — the whole export then writes
nothing, so no routine is ever approximated silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coven_core.errors import ValidationError
from coven_core.model import OverlapPolicy, RevisionSpec, RoutineState
from coven_core.moving.dst_differences import DstDifference, Scheduler, differences
from coven_core.moving.plan import notes_lines
from coven_core.notation.i18n import N_, _, ngettext
from coven_core.operations import settings
from coven_core.queries import RoutineView, list_routines
from coven_core.schedule.timetable import Timetable
from coven_core.views.policies import policy_fields

if TYPE_CHECKING:
    from coven_core.store.store import Store

#: What Coven keeps that neither systemd nor Kubernetes has, for every routine.
NEVER_CARRIED = (
    N_("quarantine after repeated failures (coven release / probe)"),
    N_("a person's reconciliation of a run whose outcome is unknown"),
    N_("the runner's journal and the evidence kept for that decision"),
    N_("the hash-chained audit log and the history of dispositions"),
    N_("delivery of output to the data directory, overrun warnings"),
)


@dataclass(frozen=True)
class Routine:
    """What an export needs of a stored routine."""

    name: str
    spec: RevisionSpec
    anchor: datetime
    paused: bool
    timeout: timedelta | None  # the timeout that applies (the default resolved); None: none


@dataclass(frozen=True)
class Rendered:
    files: dict[str, str]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class Exported:
    name: str
    rendered: Rendered
    differences: tuple[DstDifference, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "files": sorted(self.rendered.files),
            "not_carried_over": list(self.rendered.notes),
            "dst_differences": [d.to_json() | {"sentence": d.sentence} for d in self.differences],
        }


@dataclass(frozen=True)
class Export:
    target: Scheduler
    routines: tuple[Exported, ...]

    def write(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        for routine in self.routines:
            for filename, text in routine.rendered.files.items():
                (out / filename).write_text(text, encoding="utf-8")

    def to_json(self) -> dict[str, Any]:
        return {
            "to": self.target.value,
            "routines": [routine.to_json() for routine in self.routines],
            "never_carried_over": list(NEVER_CARRIED),  # English, as all JSON
        }

    def lines(self, out: Path) -> list[str]:
        count = len(self.routines)
        head = ngettext("exported {count} routine to {target} in {out}:",
                        "exported {count} routines to {target} in {out}:", count)  # fmt: skip
        lines = [head.format(count=count, target=self.target.value, out=out)]
        for routine in self.routines:
            lines.append(f"  {routine.name}: {', '.join(sorted(routine.rendered.files))}")
            lines.extend(notes_lines(routine.rendered.notes, routine.differences))
        never = "; ".join(_(line) for line in NEVER_CARRIED)
        lines.append(_("never carried over: {what}").format(what=never))
        return lines


@dataclass(frozen=True)
class Refused:
    """A routine the target has no form for, and why."""

    name: str
    why: str


Renderer = Callable[[Routine], Rendered]


def export(
    target: Scheduler, routines: Iterable[Routine], render: Renderer, start: datetime
) -> Export:
    """Every routine rendered, or ValidationError naming each one that cannot be."""
    each = export_each(target, routines, render, start)
    refused = [f"{one.name!r} ({one.why})" for one in each if isinstance(one, Refused)]
    if refused:
        raise ValidationError(
            _("cannot export {refused}; nothing was written").format(refused="; ".join(refused))
        )
    return Export(target, tuple(one for one in each if isinstance(one, Exported)))


def export_each(
    target: Scheduler, routines: Iterable[Routine | Refused], render: Renderer, start: datetime
) -> list[Exported | Refused]:
    """Each routine on its own: what exporting it writes, with the year's DST differences
    from ``start``, or why the target cannot express it (the app's dry run, routine by
    routine; :func:`export` is all or nothing). A routine already refused stays so."""
    found: list[Exported | Refused] = []
    for routine in routines:
        if isinstance(routine, Refused):
            found.append(routine)
            continue
        try:  # a zone the tz database lost, say, is refused by name like a schedule
            rendered = render(routine)
            table = Timetable.build(routine.spec.schedule, routine.spec.timezone, routine.anchor)
        except ValidationError as error:
            found.append(Refused(routine.name, str(error)))
            continue
        year = differences(table, target, start, start + timedelta(days=365))
        found.append(Exported(routine.name, rendered, year))
    return found


def renderer(target: Scheduler, image: str | None = None) -> Renderer:
    """How ``target``'s files are made (Kubernetes needs the image that has the commands)."""
    if target is Scheduler.SYSTEMD:
        from coven_core.moving.systemd_units import render_systemd

        return render_systemd
    if target is Scheduler.KUBERNETES and image:
        from coven_core.moving.kubernetes import render_kubernetes

        return partial(render_kubernetes, image=image)
    raise ValidationError(
        _("export to {target} needs the image that has the routines' commands").format(
            target=target.value
        )
        if target is Scheduler.KUBERNETES
        else _("Coven exports to systemd and Kubernetes, not to {target}").format(
            target=target.value
        )
    )


def stored_routines(store: Store, names: Sequence[str] = ()) -> list[Routine]:
    """``names`` as stored (every routine when none), each as an export needs it: a routine
    that cannot be read, or a name that is no routine, is refused by name."""
    each = stored_each(store, names)
    for one in each:
        if isinstance(one, Refused):
            raise ValidationError(one.why)
    return [one for one in each if isinstance(one, Routine)]


def stored_each(store: Store, names: Sequence[str] = ()) -> list[Routine | Refused]:
    """As :func:`stored_routines`, but a routine that cannot be read is one :class:`Refused`
    among the rest (the app's window: one broken routine leaves the others exportable)."""
    views = {view.routine.name: view for view in list_routines(store)}
    unknown = [name for name in names if name not in views]
    if unknown:
        raise ValidationError(
            _("no routine named {names}").format(names=", ".join(map(repr, unknown)))
        )
    with store.read() as conn:
        stored = {value.name: value.value for value in settings.current(conn)}
    default = settings.default_timeout(stored.get(settings.DEFAULT_TIMEOUT))
    return [_routine(views[name], default) for name in names or sorted(views)]


def _routine(view: RoutineView, default: timedelta) -> Routine | Refused:
    name, revision = view.routine.name, view.revision
    if revision is None:
        why = _("routine {name!r} cannot be read: {why}").format(name=name, why=view.broken)
        return Refused(name, why)
    spec = revision.spec
    paused = view.routine.state is not RoutineState.ACTIVE or spec.shadow  # a trial never runs
    timeout = default if spec.timeout is None else spec.timeout
    return Routine(name, spec, revision.anchor, paused, timeout)


def common_notes(routine: Routine) -> list[str]:
    """What does not carry over from the routine's own settings, to either target: its
    retries and overlap, and every policy of DESIGN §14 it sets, as ``routine show`` says it
    (a trial is exported paused: the other system would start the command)."""
    spec = routine.spec
    notes = [
        _("{policy}: {what}").format(policy=label, what=value)
        for label, value in policy_fields(spec, None)
    ]
    if spec.retries:
        notes.append(ngettext("{count} retry with Coven's backoff",
                              "{count} retries with Coven's backoff",
                              spec.retries).format(count=spec.retries))  # fmt: skip
    if spec.idempotent:
        notes.append(_("idempotent (re-running an ambiguous attempt)"))
    if spec.overlap is OverlapPolicy.QUEUE_ONE:
        notes.append(_("overlap queue_one: a moment due while a run is active is not queued"))
    return notes
