"""The query API: what the CLI and the GUI read (DESIGN §10). Read-only, one snapshot each.

With :mod:`coven_core.operator` this is one of the app's two faces of the engine: every read
view the windows and the tray show is here, as plain typed records, with the words a person
reads them in. The views computed elsewhere in the engine are re-exported from where they live
and loaded on first use (see :data:`_ELSEWHERE`): ``coven list`` does not pay for the
timeline or the doctor.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from coven_core import events
from coven_core.events import Event
from coven_core.model import Revision, Routine, RoutineState
from coven_core.notation import i18n
from coven_core.notation.durations import NO_TIMEOUT, format_timeout
from coven_core.notation.reasons import reason_text as reason_text
from coven_core.notation.reasons import window_reason_text as window_reason_text
from coven_core.notation.utc import local_seconds, utc_text
from coven_core.schedule.exclusions import excludes
from coven_core.scheduling import routines
from coven_core.store.codec import instant_from as instant_from  # the store's text instants
from coven_core.store.codec import maybe_instant_from
from coven_core.store.query import scalar
from coven_core.store.store import Store
from coven_core.tz.binding import BoundTime as BoundTime
from coven_core.views.glance import scheduling_paused

if TYPE_CHECKING:  # what _ELSEWHERE loads on first use, named here for the type checker
    from coven_core.integrity.audit import AuditEntry as AuditEntry
    from coven_core.integrity.doctor import Report as Report
    from coven_core.integrity.doctor import doctor as doctor
    from coven_core.moving.dst_differences import ForeignScheduler as ForeignScheduler
    from coven_core.moving.export import NEVER_CARRIED as NEVER_CARRIED
    from coven_core.moving.export import Export as Export
    from coven_core.moving.export import Exported as Exported
    from coven_core.moving.export import Refused as Refused
    from coven_core.moving.export import export_each as export_each
    from coven_core.moving.export import renderer as renderer
    from coven_core.moving.export import stored_each as stored_each
    from coven_core.moving.plan import ImportPlan as ImportPlan
    from coven_core.moving.plan import PlannedRoutine as PlannedRoutine
    from coven_core.moving.plan import import_preview as import_preview
    from coven_core.moving.plan import schedule_words as schedule_words
    from coven_core.moving.sources import users_crontab as users_crontab
    from coven_core.notation.i18n import N_ as N_
    from coven_core.notation.i18n import _ as _
    from coven_core.notation.i18n import ngettext as ngettext
    from coven_core.notation.i18n import use_locale as use_locale
    from coven_core.notation.i18n import user_locale as user_locale
    from coven_core.notation.quantities import duration_text as duration_text
    from coven_core.notation.reasons import failure_text as failure_text
    from coven_core.notation.sizes import size_text as size_text
    from coven_core.operations.drafts import DraftCheck as DraftCheck
    from coven_core.operations.drafts import RoutineDraft as RoutineDraft
    from coven_core.schedule.timetable import ScheduleKind as ScheduleKind
    from coven_core.schedule.timetable import Timetable
    from coven_core.schedule.words import describe_timetable as describe_timetable
    from coven_core.tz.binding import LocalTimeKind as LocalTimeKind
    from coven_core.tz.local import resolve_local_zone as resolve_local_zone
    from coven_core.tz.notes import format_offset as format_offset
    from coven_core.tz.transitions import Transition as Transition
    from coven_core.tz.tzdb import Tzdb
    from coven_core.tz.tzdb import available_zones as available_zones
    from coven_core.tz.tzdb import zone as zone
    from coven_core.views.attention import AttemptEvidence as AttemptEvidence
    from coven_core.views.attention import Item as Item
    from coven_core.views.attention import attention as attention
    from coven_core.views.diagnostics import DataDirectory as DataDirectory
    from coven_core.views.diagnostics import Diagnostics as Diagnostics
    from coven_core.views.diagnostics import HostEvent as HostEvent
    from coven_core.views.diagnostics import PassLine as PassLine
    from coven_core.views.diagnostics import diagnostics as diagnostics
    from coven_core.views.explain import MomentFacts as MomentFacts
    from coven_core.views.explain import OccurrenceExplanation as OccurrenceExplanation
    from coven_core.views.explain import RoutineExplanation as RoutineExplanation
    from coven_core.views.explain import cause_text as cause_text
    from coven_core.views.explain import change_sentence as change_sentence
    from coven_core.views.explain import explain_occurrence as explain_occurrence
    from coven_core.views.explain import explain_routine as explain_routine
    from coven_core.views.explain import outcome_sentence as outcome_sentence
    from coven_core.views.notices import Notice as Notice
    from coven_core.views.notices import NoticeKind as NoticeKind
    from coven_core.views.notices import notice as notice
    from coven_core.views.notices import throttle as throttle
    from coven_core.views.notices import wake_summary as wake_summary
    from coven_core.views.overview import Overview as Overview
    from coven_core.views.overview import RoutineLine as RoutineLine
    from coven_core.views.overview import RunningRun as RunningRun
    from coven_core.views.overview import TrayState as TrayState
    from coven_core.views.overview import overview as overview
    from coven_core.views.policies import after_only as after_only
    from coven_core.views.preview import Preview as Preview
    from coven_core.views.quarantined import Failure as Failure
    from coven_core.views.quarantined import Quarantined as Quarantined
    from coven_core.views.quarantined import quarantined as quarantined
    from coven_core.views.runs import AttemptLine as AttemptLine
    from coven_core.views.runs import OutputTail as OutputTail
    from coven_core.views.runs import RunDetail as RunDetail
    from coven_core.views.runs import RunRow as RunRow
    from coven_core.views.runs import run_detail as run_detail
    from coven_core.views.runs import runs as runs
    from coven_core.views.status import Status as Status
    from coven_core.views.story import caught_up as caught_up
    from coven_core.views.story import decision_consequence as decision_consequence
    from coven_core.views.timeline import BAND_ASLEEP as BAND_ASLEEP
    from coven_core.views.timeline import MAX_RANGE as MAX_RANGE
    from coven_core.views.timeline import CoalescedWindow as CoalescedWindow
    from coven_core.views.timeline import Lane as Lane
    from coven_core.views.timeline import PlannedMoment as PlannedMoment
    from coven_core.views.timeline import RecordedOccurrence as RecordedOccurrence
    from coven_core.views.timeline import Timeline as Timeline
    from coven_core.views.timeline import timeline as timeline
    from coven_core.views.tooltip import state_word as state_word
    from coven_core.views.tooltip import tooltip as tooltip

#: Read views and words computed elsewhere in the engine, by the module that computes them:
#: loaded when first asked for (module ``__getattr__``), then kept in this module.
_ELSEWHERE: dict[str, tuple[str, ...]] = {
    "coven_core.integrity.audit": ("AuditEntry",),
    "coven_core.integrity.doctor": ("Report", "doctor"),
    "coven_core.moving.dst_differences": ("ForeignScheduler",),
    "coven_core.moving.export": (
        "NEVER_CARRIED", "Export", "Exported", "Refused", "export_each", "renderer",
        "stored_each",
    ),
    "coven_core.moving.plan": ("ImportPlan", "PlannedRoutine", "import_preview", "schedule_words"),
    "coven_core.moving.sources": ("users_crontab",),
    "coven_core.notation.i18n": ("_", "N_", "ngettext", "use_locale", "user_locale"),
    "coven_core.notation.reasons": ("failure_text",),
    "coven_core.notation.quantities": ("duration_text",),
    "coven_core.notation.sizes": ("size_text",),
    "coven_core.operations.drafts": ("DraftCheck", "RoutineDraft"),
    "coven_core.views.preview": ("Preview",),
    "coven_core.schedule.timetable": ("ScheduleKind",),
    "coven_core.schedule.words": ("describe_timetable",),
    "coven_core.tz.binding": ("LocalTimeKind",),
    "coven_core.tz.local": ("resolve_local_zone",),
    "coven_core.tz.notes": ("format_offset",),
    "coven_core.tz.transitions": ("Transition",),
    "coven_core.tz.tzdb": ("available_zones", "zone"),
    "coven_core.views.attention": ("AttemptEvidence", "Item", "attention"),
    "coven_core.views.diagnostics": (
        "DataDirectory", "Diagnostics", "HostEvent", "PassLine", "diagnostics",
    ),
    "coven_core.views.explain": (
        "MomentFacts", "OccurrenceExplanation", "RoutineExplanation", "cause_text",
        "change_sentence", "explain_occurrence", "explain_routine", "outcome_sentence",
    ),
    "coven_core.views.notices": ("Notice", "NoticeKind", "notice", "throttle", "wake_summary"),
    "coven_core.views.policies": ("after_only",),
    "coven_core.views.overview": (
        "Overview", "RoutineLine", "RunningRun", "TrayState", "overview",
    ),
    "coven_core.views.quarantined": ("Failure", "Quarantined", "quarantined"),
    "coven_core.views.runs": (
        "AttemptLine", "OutputTail", "RunDetail", "RunRow", "run_detail", "runs",
    ),
    "coven_core.views.status": ("Status",),
    "coven_core.views.story": ("caught_up", "decision_consequence"),
    "coven_core.views.timeline": (
        "BAND_ASLEEP", "MAX_RANGE", "CoalescedWindow", "Lane", "PlannedMoment",
        "RecordedOccurrence", "Timeline", "timeline",
    ),
    "coven_core.views.tooltip": ("state_word", "tooltip"),
}  # fmt: skip
_HOME = {name: module for module, names in _ELSEWHERE.items() for name in names}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


@dataclass(frozen=True)
class RoutineView:
    routine: Routine
    revision: Revision | None  # None: the newest revision cannot be read (see ``broken``)
    last_disposition: str | None
    last_at: datetime | None
    broken: str | None = None  # why the routine plans nothing, and how to mend it
    paused_all: bool = False  # all scheduling is paused (coven pause --all)
    last_decided_as: str | None = None  # a decided last run: succeeded or failed

    @property
    def state(self) -> str:
        """The routine's state as a person reads it: ``broken`` outranks the stored one, and
        an active routine is ``paused`` while all scheduling is."""
        if self.broken:
            return "broken"
        if self.paused_all and self.routine.state is RoutineState.ACTIVE:
            return RoutineState.PAUSED.value
        return self.routine.state.value

    @property
    def state_reason(self) -> str | None:
        if self.paused_all and self.routine.state is RoutineState.ACTIVE:
            return ALL_PAUSED
        return self.routine.state_reason

    @property
    def next_due(self) -> datetime | None:
        """The next moment that will run: none while the routine is not active (paused —
        by itself or with everything — quarantined or broken): nothing runs until a person
        acts, and moments that pass meanwhile are skipped."""
        return self.routine.next_due if self.state == RoutineState.ACTIVE.value else None

    @property
    def zone(self) -> str:
        """The zone to show its times in: its own, or UTC while that does not bind."""
        return "UTC" if self.broken or self.revision is None else self.revision.spec.timezone

    def to_json(self) -> dict[str, Any]:
        fields = {
            "id": self.routine.id,
            "name": self.routine.name,
            "state": self.state,
            "state_reason": self.state_reason,
            "paused_all": self.paused_all,
            "broken": self.broken,
            "next_due": _iso(self.next_due),
            "last_disposition": self.last_disposition,
            "last_decided_as": self.last_decided_as,
            "last_at": _iso(self.last_at),
        }
        if self.revision is not None:
            fields |= _revision_json(self.revision)
        return fields


def _revision_json(revision: Revision) -> dict[str, Any]:
    from coven_core.views.policies import policy_json  # its sentences need i18n: not at import

    spec = revision.spec
    return {
        "schedule": spec.schedule,
        "timezone": spec.timezone,
        "zone_source": spec.zone_source,
        "revision": revision.number,
        "tzdb_version": revision.tzdb_version,
        "dst_policy": revision.dst_policy,
        "misfire": spec.misfire.value,
        "grace_seconds": None if spec.grace is None else spec.grace.total_seconds(),
        "overlap": spec.overlap.value,
        "timeout": format_timeout(spec.timeout),  # 2h, none (said so) or default
        "timeout_seconds": _limit_seconds(spec.timeout),
        "retries": spec.retries,
        "idempotent": spec.idempotent,
        "shell": spec.shell,
        "stop_grace_seconds": spec.stop_grace.total_seconds(),
        "quarantine_after": spec.quarantine_after,
        "command": list(spec.argv),
        "cwd": spec.cwd,
        "env": sorted(key for key, _ in spec.env),  # values may be secret (§13)
        **policy_json(spec),
    }


def _limit_seconds(timeout: timedelta | None) -> float | None:
    """A timeout's seconds; null for ``none`` and ``default`` (``timeout`` tells which)."""
    if timeout is None or timeout == NO_TIMEOUT:
        return None
    return timeout.total_seconds()


def _iso(instant: datetime | None) -> str | None:
    return None if instant is None else utc_text(instant)


ALL_PAUSED = "all scheduling is paused"


def routine_view(
    conn: apsw.Connection, routine: Routine, paused_all: bool | None = None
) -> RoutineView:
    """``paused_all``: whether all scheduling is paused, when the caller already knows."""
    revision, broken = routines.loaded(conn, routine)
    if paused_all is None:
        paused_all = scheduling_paused(conn)
    row = conn.execute(f"{_LAST} WHERE r.id = ?", (routine.id,)).fetchone()
    return _view(routine, revision, broken, row[1:] if row else (None,) * 3, paused_all)


#: Each routine's last settled occurrence: its disposition, when, and which way a person
#: decided it (reconciled). A subquery a routine,
#: in one statement: a statement a routine cost the Routines page's read a tenth of its time
#: (bench_routines_page, "its reload").
_LAST = (
    "SELECT r.id, o.disposition, o.settled_at, o.reconciled_as "
    "FROM routines AS r LEFT JOIN occurrences AS o "
    "ON o.id = (SELECT id FROM occurrences WHERE routine_id = r.id "
    "AND disposition IS NOT NULL ORDER BY scheduled_utc DESC, id DESC LIMIT 1)"
)


def _view(
    routine: Routine,
    revision: Revision | None,
    broken: routines.BrokenRevision | None,
    last: tuple[str | None, str | None, str | None],
    paused_all: bool,
) -> RoutineView:
    disposition, at, decided_as = last[0], maybe_instant_from(last[1]), last[2]
    why = None if broken is None else broken.reason(routine.name)
    return RoutineView(routine, revision, disposition, at, why, paused_all, decided_as)


def usable(view: RoutineView) -> Revision:
    """The view's revision, or the error a person reads when the routine is broken."""
    if view.broken is not None or view.revision is None:
        raise routines.BrokenRoutine(view.routine.name, view.broken or "its revision is missing")
    return view.revision


def show(store: Store, name: str) -> RoutineView:
    with store.read() as conn:
        return routine_view(conn, routines.by_name(conn, name))


def retry_refusal(store: Store, run_id: str) -> str | None:
    """Why ``coven retry`` would refuse this run now, in its words; None when it would plan
    another attempt. Read only: a window asks before it offers Retry."""
    from coven_core.operations.runs import retry_refusal as refusal

    with store.read() as conn:
        return refusal(conn, run_id)


def list_routines(store: Store) -> list[RoutineView]:
    with store.read() as conn:
        paused_all = scheduling_paused(conn)
        lasts = {row[0]: row[1:] for row in conn.execute(f"{_LAST} WHERE r.state != 'deleted'")}
        return [_view(routine, revision, broken, lasts[routine.id], paused_all)
                for routine, revision, broken in routines.loaded_live(conn)]  # fmt: skip


@dataclass(frozen=True)
class HistoryRow:
    occurrence_id: str
    run_id: str | None
    kind: str
    utc: datetime
    local: str | None
    offset_seconds: int | None
    state: str
    disposition: str | None
    reason: str | None
    window_first: datetime | None
    window_last: datetime | None
    window_count: int | None
    cause: str | None
    decision: str | None = None  # a policy decision's inputs, as stored (JSON)

    def to_json(self) -> dict[str, Any]:
        return {
            "occurrence_id": self.occurrence_id,
            "run_id": self.run_id,
            "kind": self.kind,
            "utc": _iso(self.utc),
            "local": local_seconds(self.local),
            "offset": _offset_text(self.offset_seconds),
            "disposition": self.disposition,
            "state": self.state,
            "reason": self.reason,
            "decision": None if self.decision is None else json.loads(self.decision),
            "window": None  # a broken routine's window has bounds but no count
            if self.window_first is None
            else {
                "first": _iso(self.window_first),
                "last": _iso(self.window_last),
                "count": self.window_count,
                "cause": self.cause,
            },
        }


def _offset_text(seconds: int | None) -> str | None:
    if seconds is None:
        return None
    sign, minutes = ("-" if seconds < 0 else "+"), abs(seconds) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def history(store: Store, name: str, limit: int = 20) -> tuple[RoutineView, list[HistoryRow]]:
    """Occurrences newest first (deleted routines' names are not searched)."""
    with store.read() as conn:
        view = routine_view(conn, routines.by_name(conn, name))
        rows = conn.execute(
            "SELECT id, run_id, kind, scheduled_utc, local_time, utc_offset, state, disposition, "
            "reason, window_first, window_last, window_count, cause, decision FROM occurrences "
            "WHERE routine_id = ? ORDER BY scheduled_utc DESC, id DESC LIMIT ?",
            (view.routine.id, limit),
        )
        return view, [_history_row(row) for row in rows]


def _history_row(row: tuple[Any, ...]) -> HistoryRow:
    (oid, run_id, kind, at, local, offset, state, disposition, reason, first, last, count,
     cause, decision) = row  # fmt: skip
    return HistoryRow(
        oid, run_id, kind, instant_from(at), local, offset, state, disposition, reason,
        maybe_instant_from(first), maybe_instant_from(last), count, cause, decision,
    )  # fmt: skip


@dataclass(frozen=True)
class Explanation:
    view: RoutineView
    upcoming: Preview
    verdict: str  # why it would or would not run next, in one sentence
    next_run: BoundTime | None = None  # the first moment that will really run
    paused_all: bool = False  # all scheduling is paused


def explain(store: Store, name: str, now: datetime, count: int = 10) -> Explanation:
    with store.read() as conn:
        paused_all = scheduling_paused(conn)
        view = routine_view(conn, routines.by_name(conn, name), paused_all)
    from coven_core.views.preview import preview  # the tray never explains: not at its start

    start = max(now, view.routine.planned_through)
    revision = usable(view)
    upcoming = preview(routines.timetable(revision), start, None, count, revision.spec.except_dates)
    next_run = _next_run(view, start)
    verdict = _verdict(view, paused_all, next_run, bool(upcoming.moments))
    return Explanation(view, upcoming, verdict, next_run, paused_all)


def _next_run(view: RoutineView, start: datetime) -> BoundTime | None:
    """The first moment that will really run — looking past skipped ones, not just the
    range shown (a yearly rule's next few moments may all fall in DST gaps)."""
    revision = usable(view)
    moments = routines.timetable(revision).moments_from(start)
    dates = revision.spec.except_dates
    return next((m for m in islice(moments, 10_000) if not (m.skipped or excludes(dates, m))), None)


def _verdict(
    view: RoutineView, paused_all: bool, first: BoundTime | None, any_moments: bool
) -> str:
    """Whether and when it runs next, in the user's language (``coven explain``)."""
    routine = view.routine
    if routine.state is not RoutineState.ACTIVE:
        state = i18n._(routine.state.value)  # "paused": marked in views/explain
        if not routine.state_reason:
            return i18n._("It will not run: the routine is {state}.").format(state=state)
        return i18n._("It will not run: the routine is {state} ({reason}).").format(
            state=state, reason=reason_text(routine.state_reason)
        )
    if paused_all:
        return i18n._("It will not run: all scheduling is paused (coven resume --all).")
    if first is None and any_moments:
        return i18n._(
            "It will not run: its upcoming times do not exist in {place} (they fall in "
            "daylight-saving gaps, and Coven never moves a run to another time)."
        ).format(place=view.zone)
    from coven_core.views.explain import chain_verdict  # it reads this module

    chained = chain_verdict(view.revision, None)
    if first is None and chained is not None:
        return chained
    if first is None:
        return i18n._("It will not run again: its schedule has no further occurrences.")
    return i18n._("It will run next at {utc} ({local} local).").format(
        utc=_iso(first.utc), local=f"{first.local:%Y-%m-%d %H:%M}"
    )


# -- what the app reads beyond the views above ------------------------------------------------
def events_since(store: Store, seq: int) -> list[Event]:
    """The events after ``seq``, oldest first, in one snapshot (how the app catches up)."""
    with store.read() as conn:
        return events.since(conn, seq)


def last_event_seq(store: Store) -> int:
    """The newest event's sequence number (0 for none): where the app starts catching up."""
    with store.read() as conn:
        return int(scalar(conn, "SELECT coalesce(max(seq), 0) FROM events"))


def recent_audit(store: Store, *, limit: int = 20, target: str | None = None) -> list[AuditEntry]:
    """The newest audit entries, newest first, optionally of one target (a run, a routine)."""
    from coven_core.integrity import audit

    return audit.recent(store, limit=limit, target=target)


def check_draft(draft: RoutineDraft, now: datetime, anchor: datetime | None = None) -> DraftCheck:
    """Every problem of a routine form's draft, and its next moments; nothing is stored."""
    from coven_core.operations import drafts

    return drafts.check(draft, now, anchor)


def timetable(revision: Revision) -> Timetable:
    """A revision's schedule, bound to its zone (raises BrokenRevision when it cannot be)."""
    return routines.timetable(revision)


def describe_overrun(running: float | None, usual: float | None, locale: str) -> str:
    """How long a run has been running against its usual duration, in words."""
    from coven_core.scheduling import overrun

    return overrun.describe(running, usual, locale)


def tz_database() -> Tzdb:
    """The tz database in use: its source and IANA release."""
    from coven_core.tz import tzdb

    return tzdb.active()


def recent_log_lines(data_dir: Path, count: int = 200) -> list[str]:
    """The newest lines of the store's log file."""
    from coven_core.system import logfile

    return logfile.recent_lines(data_dir, count)
