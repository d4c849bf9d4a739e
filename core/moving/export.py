"""An export: per routine the files for the other system, what does not carry over, and each
moment of the coming year where that system's DST behaviour differs from Coven's (§15).

A routine the target cannot express is refused by name — the whole export then writes
nothing, so no routine is ever approximated silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from coven_core.errors import ValidationError
from coven_core.model import OverlapPolicy, RevisionSpec
from coven_core.moving.dst_differences import DstDifference, Scheduler, differences
from coven_core.moving.plan import notes_lines
from coven_core.notation.i18n import N_, _, ngettext
from coven_core.schedule.timetable import Timetable

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


Renderer = Callable[[Routine], Rendered]


def export(
    target: Scheduler, routines: Iterable[Routine], render: Renderer, start: datetime
) -> Export:
    """Every routine rendered, or ValidationError naming each one that cannot be."""
    done: list[Exported] = []
    refused: list[str] = []
    for routine in routines:
        try:
            rendered = render(routine)
        except ValidationError as error:
            refused.append(f"{routine.name!r} ({error})")
            continue
        table = Timetable.build(routine.spec.schedule, routine.spec.timezone, routine.anchor)
        found = differences(table, target, start, start + timedelta(days=365))
        done.append(Exported(routine.name, rendered, found))
    if refused:
        raise ValidationError(
            _("cannot export {refused}; nothing was written").format(refused="; ".join(refused))
        )
    return Export(target, tuple(done))


def common_notes(routine: Routine) -> list[str]:
    """What does not carry over from the routine's own settings, to either target."""
    spec = routine.spec
    notes = []
    if spec.retries:
        notes.append(_("retries {count} with Coven's backoff").format(count=spec.retries))
    if spec.idempotent:
        notes.append(_("idempotent (re-running an ambiguous attempt)"))
    if spec.overlap is OverlapPolicy.QUEUE_ONE:
        notes.append(_("overlap queue_one: a moment due while a run is active is not queued"))
    return notes
