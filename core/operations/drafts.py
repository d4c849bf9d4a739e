"""A routine as a person types it into a form: text in, a :class:`RevisionSpec` out, or the
problems, each tied to the field it is about (the desktop's routine editor).

The readings and the messages are the engine's own — the schedule parser, the zone lookup
(``local`` resolved and proven), the duration reader and :func:`definitions.validated` — so a
form says exactly what ``coven routine add`` says. Checking a draft is pure (no store) and
also gives the preview of its next moments, gaps and folds included.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any

from coven_core.errors import CovenError
from coven_core.model import MisfirePolicy, OverlapPolicy, RevisionSpec
from coven_core.notation.durations import (
    NO_LIMIT,
    format_duration,
    format_timeout,
    parse_limit,
    parse_timeout,
)
from coven_core.notation.i18n import _, ngettext
from coven_core.operations.definitions import validated
from coven_core.operations.readiness import missing, shell_syntax
from coven_core.operations.routine_names import check_name
from coven_core.schedule.exclusions import dates_text, normalised, parse_date
from coven_core.schedule.timetable import Timetable
from coven_core.scheduling.chains import parse_after
from coven_core.tz.local import resolve_zone_key
from coven_core.views.preview import Preview, preview

#: How many moments the form previews.
PREVIEW_COUNT = 8

Field = str  # "name", "schedule", "timezone", "command", "grace", "timeout", "except_dates", "form"


@dataclass(frozen=True)
class RoutineDraft:
    """The form's fields as typed (durations as text: ``15m``, ``none``).

    An empty duration field stands for what a field left alone means — no limit (``none``),
    for the timeout the global default (``default``) — so a form shows that in a person's
    words instead of the engine's English keyword; the keywords are still read as typed."""

    name: str
    schedule: str
    timezone: str
    command: str
    shell: bool = False
    misfire: MisfirePolicy = MisfirePolicy.LATEST_ONLY
    grace: str = ""  # empty: none, the latest missed moment always runs once
    overlap: OverlapPolicy = OverlapPolicy.SKIP
    timeout: str = ""  # empty: default, the global default timeout (coven config)
    retries: int = 0
    idempotent: bool = False
    except_dates: str = ""  # local dates, comma-separated: 2026-12-24, 2026-12-25
    shadow: bool = False  # a trial: decided as if live, never started
    max_runs_per_day: int = 0  # 0: no budget of runs
    max_runtime_per_day: str = ""  # run time a day, as typed (empty: no limit)
    cooldown: str = ""  # rest after a failure, as typed (empty: none)
    cooldown_max: str = ""  # the longest rest (empty: a day)
    group: str = ""  # empty: no group
    after: str = ""  # ROUTINE[:succeeded|:finished]; empty: no chain
    on_ac_power: bool = False  # conditions: a moment waits within its grace (§14)
    when_online: bool = False
    keep_awake: bool = False  # the machine stays awake while a run is active

    @property
    def has_policies(self) -> bool:
        """Whether any policy of DESIGN §14 is set (the editor then shows them unfolded)."""
        limits = (self.max_runtime_per_day, self.cooldown, self.cooldown_max)
        typed = (self.except_dates, self.group, self.after)
        switches = (self.shadow, self.on_ac_power, self.when_online, self.keep_awake)
        return (
            any(switches) or bool(self.max_runs_per_day) or any(t.strip() for t in typed)
            or any(limit.strip().lower() not in ("", NO_LIMIT) for limit in limits)
        )  # fmt: skip

    @classmethod
    def of(cls, name: str, spec: RevisionSpec) -> RoutineDraft:
        """The draft that shows a stored revision (for editing it)."""
        command = spec.argv[0] if spec.shell else shlex.join(spec.argv)
        return cls(
            name, spec.schedule, spec.timezone, command, spec.shell, spec.misfire,
            _limit_text(spec.grace), spec.overlap,
            "" if spec.timeout is None else format_timeout(spec.timeout),
            spec.retries, spec.idempotent, dates_text(spec.except_dates), spec.shadow,
            spec.max_runs_per_day or 0, _limit_text(spec.max_runtime_per_day),
            _limit_text(spec.cooldown), _limit_text(spec.cooldown_max), spec.group or "",
            _after_text(spec), spec.on_ac_power, spec.when_online, spec.keep_awake,
        )  # fmt: skip


@dataclass(frozen=True)
class Problem:
    field: Field
    message: str


@dataclass(frozen=True)
class DraftCheck:
    """What the form shows: the problems (none: it can be saved), the preview, and what
    the command will meet that a person may not mean (it can be saved all the same)."""

    problems: tuple[Problem, ...]
    spec: RevisionSpec | None  # when there are no problems
    preview: Preview | None  # when the schedule and zone are valid
    warnings: tuple[str, ...] = ()  # about the command: shell syntax, a program not there

    def message(self, field: Field) -> str | None:
        return next((p.message for p in self.problems if p.field == field), None)


class _Collector:
    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def read(self, field: Field, reading: Callable[[], Any]) -> Any:
        """``reading()``, or None with its error recorded against ``field``."""
        try:
            return reading()
        except (CovenError, ValueError) as error:
            self.problems.append(Problem(field, str(error)))
            return None


def check(
    draft: RoutineDraft,
    now: datetime,
    anchor: datetime | None = None,
    count: int = PREVIEW_COUNT,
) -> DraftCheck:
    """Every field's problem, and the next ``count`` moments from ``now``. ``anchor`` is the
    RRULE DTSTART / interval origin (a new routine's is ``now``, as the operator sets it)."""
    found = _Collector()
    found.read("name", lambda: check_name(draft.name))
    zone = found.read("timezone", lambda: resolve_zone_key(draft.timezone))
    # A bad zone should not hide a bad schedule: check the schedule in UTC meanwhile.
    table = found.read(
        "schedule", lambda: Timetable.build(draft.schedule, zone or "UTC", anchor or now)
    )
    argv = found.read("command", lambda: _argv(draft))
    grace = found.read("grace", lambda: _limit(draft.grace))
    timeout = found.read("timeout", lambda: _timeout(draft.timeout))
    dates = found.read("except_dates", lambda: _except_dates(draft.except_dates)) or ()
    runtime = found.read("max_runtime_per_day", lambda: _limit(draft.max_runtime_per_day))
    rest = found.read("cooldown", lambda: _limit(draft.cooldown))
    rest_max = found.read("cooldown_max", lambda: _limit(draft.cooldown_max))
    after = found.read("after", lambda: _after(draft.after))
    ready = table is not None and zone is not None
    shown = preview(table, now, None, count, dates) if ready else None
    if found.problems:
        return DraftCheck(tuple(found.problems), None, shown, _warnings(draft, None))
    policies = {
        "except_dates": dates, "shadow": draft.shadow, "max_runtime_per_day": runtime,
        "max_runs_per_day": draft.max_runs_per_day or None, "cooldown": rest,
        "cooldown_max": rest_max, "group": draft.group.strip() or None,
        "after": None if after is None else after[0],
        "after_outcome": "succeeded" if after is None else after[1],
        "on_ac_power": draft.on_ac_power, "when_online": draft.when_online,
        "keep_awake": draft.keep_awake,
    }  # fmt: skip
    spec = replace(_spec(draft, argv, grace, timeout), **policies)
    checked = found.read("form", lambda: validated(draft.name, spec))
    return DraftCheck(tuple(found.problems), checked, shown, _warnings(draft, checked))


def _warnings(draft: RoutineDraft, spec: RevisionSpec | None) -> tuple[str, ...]:
    """What the command will meet (``readiness``): shell syntax it runs without a shell
    for, and — once the form is valid — a program or folder that is not there now."""
    said = []
    if not draft.shell and (found := shell_syntax(draft.command)):
        said.append(ngettext(
            "{found} means something only to a shell: without one, the program gets it as "
            "typed (tick 'run through a shell' if it is meant for one)",
            "{found} mean something only to a shell: without one, the program gets them as "
            "typed (tick 'run through a shell' if they are meant for one)", len(found),
        ).format(found=" ".join(found)))  # fmt: skip
    absent = missing(spec) if spec is not None else []
    said += [_("{missing}; its runs fail until it exists").format(missing=m) for m in absent]
    return tuple(said)


def _argv(draft: RoutineDraft) -> tuple[str, ...]:
    """The command as an argv list; through a shell only when the person asked for one."""
    text = draft.command.strip()
    if not text:
        raise ValueError(_("the command is empty: type the program to run, e.g. /usr/bin/backup"))
    if draft.shell:
        return (text,)
    try:
        return tuple(shlex.split(text))
    except ValueError:
        raise ValueError(
            _("the command has an unclosed quote (tick 'run through a shell' for shell syntax)")
        ) from None


def _limit(text: str) -> timedelta | None:
    """A typed limit; an empty field is no limit (None), like ``none``."""
    return parse_limit(text) if text.strip() else None


def _timeout(text: str) -> timedelta | None:
    """A typed timeout; an empty field is the global default (None), like ``default``."""
    return parse_timeout(text) if text.strip() else None


def _limit_text(limit: timedelta | None) -> str:
    """A stored limit as the form shows it: no limit is an empty field."""
    return "" if limit is None else format_duration(limit)


def _after(text: str) -> tuple[str, str] | None:
    return parse_after(text) if text.strip() else None


def _after_text(spec: RevisionSpec) -> str:
    if spec.after is None:
        return ""
    return spec.after if spec.after_outcome == "succeeded" else f"{spec.after}:finished"


def _except_dates(text: str) -> tuple[date, ...]:
    """Local dates as typed: separated by commas or spaces, in any order, each once."""
    words = text.replace(",", " ").split()
    return normalised(parse_date(word) for word in words)


def _spec(
    draft: RoutineDraft,
    argv: tuple[str, ...],
    grace: timedelta | None,
    timeout: timedelta | None,
) -> RevisionSpec:
    return RevisionSpec(
        schedule=draft.schedule.strip(), timezone=draft.timezone.strip(), argv=argv,
        misfire=draft.misfire, grace=grace, overlap=draft.overlap, timeout=timeout,
        retries=draft.retries, idempotent=draft.idempotent, shell=draft.shell,
    )  # fmt: skip


def edit_to(typed: RevisionSpec) -> Callable[[RevisionSpec], RevisionSpec]:
    """The edit (for ``Operator.edit_routine``) that makes a routine's revision say what a
    checked draft's spec says.

    What the form does not show (environment, working directory, stop grace, quarantine
    after) is kept; so is the zone's provenance when the zone is unchanged, which is how a
    routine created as ``local`` keeps being asked about the host's zone changes.
    """
    shown = {name: getattr(typed, name) for name in _FORM_FIELDS}

    def apply(current: RevisionSpec) -> RevisionSpec:
        fields = dict(shown)
        if typed.timezone != current.timezone:
            fields.update(timezone=typed.timezone, zone_source=typed.zone_source)
        return replace(current, **fields)

    return apply


_FORM_FIELDS = (
    "schedule", "argv", "shell", "misfire", "grace", "overlap", "timeout", "retries",
    "idempotent", "except_dates", "shadow", "max_runs_per_day", "max_runtime_per_day",
    "cooldown", "cooldown_max", "group", "after", "after_outcome", "on_ac_power",
    "when_online", "keep_awake",
)  # fmt: skip
