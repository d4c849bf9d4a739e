"""A seeded, deterministic simulation of the engine under virtual time (issue #6).

One ``random.Random(seed)`` drives the real engine — store, scheduler, operator — through random
interleavings of routine adds, edits, pauses, resumes and deletes (cron, interval and RRULE in
zones with DST), time passing (minutes to days, across DST transitions), sleep and wake, wall
clock jumps both ways, engine crashes (between passes, at a crash-matrix boundary, or with the
whole machine) and restarts, runtime failures, slow and hanging commands, manual runs,
cancels, retries and reconciliations. Commands run in a simulated machine (:class:`World`)
that outlives each engine incarnation the way runners do, and that knows the truth: which
commands really ran and how they ended. After every step the invariants are checked
(:func:`audit_store` on the store, plus the world's truth); the first violation stops the run
with ``SIMULATION FAILED: seed=S step=N: <invariant>`` and the steps that led there.

Everything that varies is derived from the seed: routine and run ids are made deterministic
while the simulation runs, the leader lock (an OS prompt whose timing is a thread's) is
replaced by a no-op — correctness rests on the lease generation, which stays real — and the
loop's retention sweeps run without real pauses or a real-time budget.

Engine bugs the simulation already found are listed in ``test_simulation.KNOWN_BUGS``: their
violations are counted and the run goes on, so one known bug does not hide the next one
(``COVEN_SIM_STRICT=1`` makes them fail too).

Replay one seed exactly::

    COVEN_SIM_SEED=S python -m pytest tests/core/test_simulation.py

A larger run, 200 seeds × 1000 steps (the doctor's audit after every step is most of a step's
time; split it with ``COVEN_SIM_FIRST``)::

    COVEN_SIM_SEEDS=200 COVEN_SIM_STEPS=1000 python -m pytest tests/core/test_simulation.py -q

``COVEN_SIM_FIRST`` sets the first seed of a range (default 1). Fresh random seeds on every
core, strict, for a given time: ``make soak SECONDS=600`` (``tests/core/soak.py``).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import random
import re
import socket
import subprocess
import traceback
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import apsw

from coven_core.clock import SAFETY_CAP, VirtualClock, WakeReason, WakeSignal
from coven_core.errors import CovenError, ZoneError
from coven_core.host import HostState, HostWatch, Network, Power
from coven_core.integrity import audit, doctor
from coven_core.integrity.doctor import record_checks
from coven_core.model import (
    FailureClass,
    MisfirePolicy,
    OverlapPolicy,
    Revision,
    RevisionSpec,
)
from coven_core.operations import runs
from coven_core.operations.reconcile import Outcome
from coven_core.operator import Operator
from coven_core.runner.process import boot_id, start_mark
from coven_core.runtime.base import (
    Exit,
    Launch,
    LaunchError,
    Started,
    Unfinished,
    as_recorded,
    unknowable,
)
from coven_core.schedule.exclusions import excludes
from coven_core.schedule.timetable import Timetable
from coven_core.scheduling import ids, lease, occurrences, routines
from coven_core.scheduling.decisions import Segment, spans
from coven_core.scheduling.lease import Holder
from coven_core.scheduling.retry import RUNTIME_UNAVAILABLE_TRIES
from coven_core.scheduling.routines import revisions as revisions_of
from coven_core.scheduling.scheduler import Limits, Scheduler
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.errors import StoreBug
from coven_core.store.store import Store
from coven_core.system import failpoints
from coven_core.tz import tzdb
from coven_core.views.glance import scheduling_paused

ZONES = ("America/New_York", "Europe/London", "Australia/Lord_Howe", "UTC")
SCHEDULES = (
    "cron:*/30 * * * *",
    "cron:0 * * * *",
    "cron:30 1,2,3 * * *",  # 02:30 is missing in spring; 01:30 repeats in autumn
    "cron:0 2 * * *",
    "cron:15 2 * * 0",
    "every 45m",
    "every 2h",
    "every 25m",
    "rrule:FREQ=DAILY;BYHOUR=1,2;BYMINUTE=30",
    "rrule:FREQ=HOURLY;INTERVAL=3",
    "rrule:FREQ=WEEKLY;BYDAY=SU;BYHOUR=2;BYMINUTE=0,30",
)
#: Starting points a few days before DST transitions: New York (Mar 8), London (Mar 29) and
#: Lord Howe (Apr 5, a 30-minute fold) in spring; Lord Howe (Oct 4), London (Oct 25) and
#: New York (Nov 1) in autumn.
STARTS = (
    datetime(2026, 3, 6, 9, 0, tzinfo=UTC),
    datetime(2026, 3, 27, 18, 0, tzinfo=UTC),
    datetime(2026, 10, 2, 8, 0, tzinfo=UTC),
    datetime(2026, 10, 23, 20, 0, tzinfo=UTC),
)
MAX_ROUTINES = 6
#: The RevisionSpec fields of the policies (DESIGN §14) an edit may change.
_POLICY_FIELDS = (
    "except_dates", "shadow", "max_runs_per_day", "max_runtime_per_day", "cooldown",
    "cooldown_max", "group", "after", "on_ac_power", "when_online",
)  # fmt: skip
MAX_PASSES_PER_STEP = 20_000
#: Boundaries a pass or an operator command crosses in this process (the runner's and the
#: delivery's are not reached: simulated commands have no runner and no output).
CRASH_POINTS = (
    "revision.before_commit", "revision.after_commit", "plan.written", "claim.written",
    "dispatch.decided", "decide.committed", "runtime.before_start", "runtime.after_start",
    "exit.observed", "settle.committed", "publish.before",
)  # fmt: skip


@dataclass(frozen=True)
class KnownBug:
    """An engine bug the simulation found and reported; its violations are recognised by
    their text, so a run can go on looking for others (see test_simulation.KNOWN_BUGS)."""

    name: str
    pattern: str  # a regular expression searched in the violation's text

    def matches(self, problem: str) -> bool:
        return re.search(self.pattern, problem) is not None


class SimulationFailure(AssertionError):
    """An invariant broke; the message names the seed and the step for an exact replay."""


# --- the store's invariants ------------------------------------------------------------------


def audit_store(
    store: Store, now: datetime, ledger: MomentLedger | None = None, *, moments: bool = True
) -> list[str]:
    """Every invariant that the store alone can prove; an empty list when all hold.

    The doctor's invariant audit, and these checks of our own: live
    states are consistent with their attempts, attempt numbers have no holes, no moment has
    two rows, every success has exit evidence, no automatic attempt followed an ambiguous one
    of a non-idempotent routine, a routine with a run awaiting a person plans nothing, and
    every moment of every routine's schedule that was decided was decided exactly once.
    """
    conn = store.conn
    problems = _doctor_findings(store, now)
    for check in _STORE_CHECKS:
        problems.extend(check(conn))
    if moments:  # not after a retention sweep: old moments lose their rows by design
        problems.extend((ledger or MomentLedger()).check(conn))
    return problems


def _doctor_findings(store: Store, now: datetime) -> list[str]:
    """The doctor's errors (its warnings say "worth a look", not "a promise broke")."""
    report = doctor.doctor(store, now, quick=True, skip=_DOCTOR_SAYS_NOTHING_HERE)
    return [f"doctor [{f.check}]: {f.message}" for f in report.findings if f.severity == "error"]


#: Doctor's checks that say nothing in a simulation: routines are broken on purpose (by tz
#: upgrades) and the store's directory never moves. Together a fifth of a step's time.
_DOCTOR_SAYS_NOTHING_HERE = frozenset({"routines", "location"})


def _live_states(conn: apsw.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT o.id, o.state, (SELECT count(*) FROM attempts a WHERE a.occurrence_id = o.id "
        "AND a.state != 'settled') FROM occurrences o"
    )
    return [
        f"occurrence {oid} is {state} with {live} unfinished attempt(s)"
        for oid, state, live in rows
        if live != (1 if state in ("claimed", "running") else 0)
    ]


def _attempt_numbers(conn: apsw.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT occurrence_id, count(*), max(number) FROM attempts GROUP BY occurrence_id "
        "HAVING count(*) != max(number)"
    )
    return [f"occurrence {oid} has {n} attempts numbered up to {top}" for oid, n, top in rows]


def _one_row_per_moment(conn: apsw.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT routine_id, scheduled_utc, count(*) FROM occurrences WHERE kind = 'scheduled' "
        "AND id NOT LIKE '%~gap' GROUP BY routine_id, scheduled_utc HAVING count(*) > 1"
    )
    return [f"routine {rid} has {n} rows for the moment {at}" for rid, at, n in rows]


def _success_has_an_exit(conn: apsw.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT o.id FROM occurrences o WHERE o.disposition = 'succeeded' AND NOT EXISTS "
        "(SELECT 1 FROM attempts a WHERE a.occurrence_id = o.id AND a.state = 'settled' "
        "AND a.exit_code = 0 AND a.failure_class IS NULL AND a.number = "
        "(SELECT max(number) FROM attempts b WHERE b.occurrence_id = o.id))"
    )
    return [f"occurrence {oid} succeeded without exit evidence" for (oid,) in rows]


def _awaiting_routines_plan_nothing(conn: apsw.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT r.name FROM routines r WHERE r.state = 'active' AND EXISTS (SELECT 1 FROM "
        "occurrences o WHERE o.routine_id = r.id AND o.disposition = 'recovery_required')"
    )
    return [f"routine {name} is active while a run awaits a decision" for (name,) in rows]


def _no_rerun_after_ambiguity(conn: apsw.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT a.occurrence_id, count(*), (SELECT count(*) FROM reconciliations c "
        "WHERE c.occurrence_id = a.occurrence_id AND c.outcome = 'retry') FROM attempts a "
        "JOIN occurrences o ON o.id = a.occurrence_id JOIN revisions v "
        "ON v.routine_id = o.routine_id AND v.number = o.revision "
        "WHERE a.failure_class = 'ambiguous' AND v.idempotent = 0 AND EXISTS (SELECT 1 FROM "
        "attempts b WHERE b.occurrence_id = a.occurrence_id AND b.number = a.number + 1) "
        "GROUP BY a.occurrence_id"
    )
    return [
        f"occurrence {oid} of a non-idempotent routine was attempted again after {n} "
        f"ambiguous attempt(s) with {decided} decision(s) to retry"
        for oid, n, decided in rows
        if n > decided
    ]


def _shadow_starts_nothing(conn: apsw.Connection) -> list[str]:
    """A trial (shadow) revision's occurrence never has an attempt: nothing was started."""
    rows = conn.execute(
        "SELECT o.id FROM occurrences o JOIN revisions v ON v.routine_id = o.routine_id "
        "AND v.number = o.revision WHERE v.shadow AND EXISTS "
        "(SELECT 1 FROM attempts a WHERE a.occurrence_id = o.id)"
    )
    return [f"occurrence {oid} of a trial (shadow) revision has an attempt" for (oid,) in rows]


_FINISHED = ("succeeded", "failed", "timed_out", "cancelled")

# "Before" in the order things happened: the events' sequence, not their wall-clock stamps,
# which a wall clock set back puts out of order (seed 1477702067: a revision made after an
# upstream settled, stamped before it).
# Retention may have swept an old event: then the stamps are all there is.
_REVISION_EVENT = (
    "(SELECT max(e.seq) FROM events e WHERE e.routine_id = r.id AND (e.kind = 'routine_edited' "
    "AND e.data ->> '$.revision' = v.number OR e.kind = 'routine_added' AND v.number = 1)), "
    "v.created_at"
)


def _happened_before(first: tuple[int | None, str], then: tuple[int | None, str]) -> bool:
    """By event sequence where both events are kept, else by the stamps."""
    if first[0] is not None and then[0] is not None:
        return first[0] < then[0]
    return first[1] < then[1]


def _each_upstream_end_triggers_once(conn: apsw.Connection) -> list[str]:
    """Every triggered occurrence answers an upstream end its revision asked for (a settled
    attempt; a success for ``succeeded``: a person's retry may have reopened the upstream
    since); and every upstream run that ended — settled as succeeded, failed, timed out or
    cancelled after an attempt — triggers exactly one occurrence of each live routine whose
    newest revision, already in force when the upstream settled, names it (DESIGN §14)."""
    triggered = {
        oid: (rid, json.loads(decision)["upstream"], outcome)
        for oid, rid, decision, outcome in conn.execute(
            "SELECT o.id, o.routine_id, o.decision, v.after_outcome FROM occurrences o JOIN "
            "revisions v ON v.routine_id = o.routine_id AND v.number = o.revision "
            "WHERE o.kind = 'triggered'"
        )
    }
    attempts = dict(conn.execute(
        "SELECT occurrence_id, max(failure_class IS NULL) FROM attempts WHERE state = 'settled' "
        "GROUP BY occurrence_id"
    ))  # fmt: skip
    problems = [
        f"{oid} was triggered by {upstream}, which did not end as {outcome}"
        for oid, (_rid, upstream, outcome) in triggered.items()
        if upstream not in attempts or (outcome == "succeeded" and not attempts[upstream])
    ]
    downstream = list(conn.execute(
        f"SELECT r.id, v.after_routine, v.after_outcome, {_REVISION_EVENT} FROM routines r "
        "JOIN revisions v ON v.routine_id = r.id AND v.number = r.revision "
        "WHERE r.state != 'deleted' AND v.after_routine IS NOT NULL"
    ))  # fmt: skip
    upstreams = sorted({after for _rid, after, *_rest in downstream})
    marks = f"({', '.join('?' * len(upstreams))})"
    settled_seq = dict(conn.execute(
        "SELECT e.occurrence_id, max(e.seq) FROM events e JOIN routines r ON r.id = e.routine_id "
        f"WHERE r.name IN {marks} AND e.kind = 'settled' GROUP BY e.occurrence_id", upstreams,
    ))  # fmt: skip
    ends = {
        oid: (name, disposition, (settled_seq.get(oid), settled))
        for oid, name, disposition, settled in conn.execute(
            "SELECT o.id, r.name, o.disposition, o.settled_at FROM occurrences o JOIN routines r "
            f"ON r.id = o.routine_id WHERE o.disposition IN (?, ?, ?, ?) AND r.name IN {marks}",
            (*_FINISHED, *upstreams),
        )
        if oid in attempts
    }
    for upstream, (name, disposition, settled) in ends.items():
        for rid, after, outcome, seq, created in downstream:
            wanted = after == name and _happened_before((seq, created), settled)
            matches = outcome == "finished" or disposition == "succeeded"
            if wanted and matches and f"{rid}@after:{upstream}" not in triggered:
                problems.append(f"{upstream} ({disposition}) triggered nothing of {rid}")
    return problems


def _exclusions_hold(conn: apsw.Connection) -> list[str]:
    """A moment on one of its revision's exclusion dates never runs, and a moment skipped
    as excluded is on one of them (the local date decides)."""
    rows = conn.execute(
        "SELECT o.id, o.reason, o.run_id IS NOT NULL FROM occurrences o JOIN revisions v "
        "ON v.routine_id = o.routine_id AND v.number = o.revision WHERE o.kind = 'scheduled' "
        "AND (o.run_id IS NOT NULL OR o.reason = 'excluded_date') AND (coalesce(o.reason, '') = "
        "'excluded_date') != EXISTS (SELECT 1 FROM json_each(v.except_dates) "
        "WHERE value = substr(o.local_time, 1, 10))"
    )
    return [
        f"occurrence {oid} ran on an excluded date" if ran
        else f"occurrence {oid} was skipped as excluded ({reason}) on a date not excluded"
        for oid, reason, ran in rows
    ]  # fmt: skip


_STORE_CHECKS: tuple[Callable[[apsw.Connection], list[str]], ...] = (
    _live_states,
    _attempt_numbers,
    _one_row_per_moment,
    _success_has_an_exit,
    _awaiting_routines_plan_nothing,
    _no_rerun_after_ambiguity,
    _exclusions_hold,
    _shadow_starts_nothing,
    _each_upstream_end_triggers_once,
)


# --- every decided moment decided exactly once -------------------------------------------------


Moment = tuple[datetime, bool]
"""A moment of a schedule: its UTC instant, and whether its wall time does not exist (a gap's
nominal instant can equal a real moment's: 01:30 and 02:30 on London's spring-forward day)."""


@dataclass
class _Routine:
    """What the ledger knows of one routine: its expected moments and how often each was
    decided (by its own row, or inside a coalesced window)."""

    through: datetime  # expected moments are known up to here (exclusive)
    instants: list[Moment] = field(default_factory=list)  # sorted
    known: set[Moment] = field(default_factory=set)
    excluded: set[Moment] = field(default_factory=set)  # on an exclusion date (see below)
    decided: Counter[Moment] = field(default_factory=Counter)


class MomentLedger:
    """Checks, incrementally, that every moment of a routine's schedule before its planning
    cursor has exactly one decision: a row of its own, or a place in one coalesced window.

    A moment decided twice is a double run or a contradiction; a moment not decided at all
    is silent loss. The expected moments come from the revisions (each moment under the
    revision in force at its time), rows are read once each, by rowid."""

    def __init__(self) -> None:
        self._routines: dict[str, _Routine] = {}
        self._last_rowid = 0
        self._unchecked: dict[str, set[Moment]] = {}
        self._tables: dict[Revision, Timetable] = {}
        self.strays: list[str] = []

    def check(self, conn: apsw.Connection) -> list[str]:
        self._extend_moments(conn)
        self._read_new_rows(conn)
        problems: list[str | None] = list(self.strays)
        self.strays = []
        for rid, moments in self._unchecked.items():
            state = self._routines[rid]
            problems.extend(_moment_problem(rid, moment, state) for moment in sorted(moments))
        self._unchecked = {}
        return [p for p in problems if p is not None]

    def _extend_moments(self, conn: apsw.Connection) -> None:
        rows = conn.execute("SELECT id, created_at, planned_through FROM routines ORDER BY id")
        for rid, created, through in list(rows):
            state = self._routines.setdefault(rid, _Routine(instant_from(created)))
            end = instant_from(through)
            if end > state.through:
                self._add_moments(conn, rid, state, end)

    def _add_moments(self, conn: apsw.Connection, rid: str, state: _Routine, end: datetime) -> None:
        """The moments in ``[through, end)``, each under the one revision in force at its time
        (windows never precede their moments: rows are read after the cursor is followed)."""
        new = self._unchecked.setdefault(rid, set())
        for segment in self._true_segments(revisions_of(conn, rid), state.through, end):
            for bound in segment.timetable.moments_between(segment.start, segment.end):
                moment = (bound.utc, bound.skipped)
                if moment in state.known:
                    self.strays.append(
                        f"routine {rid}: the moment {bound.utc:%Y-%m-%d %H:%M}Z falls under two "
                        f"revisions (revision {segment.revision} overlaps another)"
                    )
                    continue
                state.known.add(moment)
                if excludes(segment.spec.except_dates, bound):
                    state.excluded.add(moment)
                state.instants.append(moment)
                new.add(moment)
        state.instants.sort()
        state.through = end

    def _true_segments(
        self, revisions: list[Revision], start: datetime, end: datetime
    ) -> list[Segment]:
        """The spans of ``[start, end)`` bound with every zone the tz database ever had: a
        broken routine's moments are known to the ledger though the engine cannot see them."""
        found = []
        for span in spans(revisions, start, end):
            table = self._tables.get(span.revision)
            if table is None:
                with TZ.truth():
                    spec = span.revision.spec
                    table = Timetable.build(spec.schedule, spec.timezone, span.revision.anchor)
                self._tables[span.revision] = table
            found.append(
                Segment(span.revision.number, span.revision.spec, table, span.start, span.end)
            )
        return found

    def _read_new_rows(self, conn: apsw.Connection) -> None:
        rows = conn.execute(
            "SELECT rowid, id, routine_id, kind, scheduled_utc, window_first, window_last "
            "FROM occurrences WHERE rowid > ? AND kind NOT IN ('manual', 'triggered') ORDER BY rowid",
            (self._last_rowid,),
        )
        for rowid, oid, rid, kind, at, first, last in list(rows):
            self._last_rowid = max(self._last_rowid, rowid)
            state = self._routines[rid]
            if kind == "coalesced":
                self._cover(rid, state, instant_from(first), instant_from(last))
                continue
            moment = (instant_from(at), oid.endswith("~gap"))
            state.decided[moment] += 1
            self._unchecked.setdefault(rid, set()).add(moment)
            if moment not in state.known:
                self.strays.append(f"routine {rid}: a row for {at}, not a moment of its schedule")

    def _cover(self, rid: str, state: _Routine, first: datetime, last: datetime) -> None:
        """A coalesced window decides every moment from its first to its last, gaps included."""
        low = bisect_left(state.instants, (first, False))
        high = bisect_right(state.instants, (last, True))
        touched = self._unchecked.setdefault(rid, set())
        for moment in state.instants[low:high]:
            state.decided[moment] += 1
            touched.add(moment)


def _moment_problem(rid: str, moment: Moment, state: _Routine) -> str | None:
    at, gap = moment
    count = state.decided[moment]
    when = f"{at:%Y-%m-%d %H:%M}Z"
    if at >= state.through:  # decided ahead of the cursor: checked again when it passes
        return f"routine {rid}: the moment {when} was decided twice" if count > 1 else None
    if gap:  # its own row, and it may also lie inside a window of missed moments
        return None if count >= 1 else f"routine {rid}: the gap at {when} has no row"
    if moment in state.excluded:  # likewise: it never runs (_exclusions_hold) either way
        return (
            None
            if count >= 1
            else (f"routine {rid}: the moment {when} (an excluded date) passed with no disposition")
        )
    if count == 1:
        return None
    if count == 0:
        return f"routine {rid}: the moment {when} passed with no disposition"
    return f"routine {rid}: the moment {when} was decided {count} times"


# --- the simulated machine ---------------------------------------------------------------------


class TzDatabase:
    """The tz database the engine binds zones with. An upgrade may drop a zone that routines
    use (2022b renamed Europe/Kiev) and a later one bring it back; the routines in it are
    broken meanwhile (DESIGN §6). The ledger binds with every zone, through :meth:`truth`."""

    def __init__(self) -> None:
        self.lost: frozenset[str] = frozenset()
        self._real: Callable[[str], ZoneInfo] = tzdb.zone
        self._truth = False

    def zone(self, key: str) -> ZoneInfo:
        if key in self.lost and not self._truth:
            raise ZoneError(f"unknown time zone {key!r}: this tz database has no such zone")
        return self._real(key)

    @contextlib.contextmanager
    def truth(self) -> Iterator[None]:
        self._truth = True
        try:
            yield
        finally:
            self._truth = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """The engine binds through this database until the simulation ends."""
        self._real, self.lost = tzdb.zone, frozenset()
        tzdb.zone = self.zone  # type: ignore[assignment]
        routines.timetable.cache_clear()
        try:
            yield
        finally:
            tzdb.zone = self._real  # type: ignore[assignment]
            routines.timetable.cache_clear()


TZ = TzDatabase()
#: How often a step begins with a tz database upgrade (drawn from a generator of its own, so
#: that a seed replayed without upgrades takes the same steps as before they existed).
TZ_UPGRADE_CHANCE = 0.012
#: The chance, each step, that the machine's power or network changes (issue #23).
HOST_CHANGE_CHANCE = 0.08


@dataclass(frozen=True)
class Plan:
    """How a command will behave, drawn when it starts."""

    ran: bool  # False: its spawn fails, nothing runs
    seconds: float | None  # how long it runs (monotonic); None: it hangs until stopped
    code: int | None
    signal: int | None
    failure: FailureClass | None = None


@dataclass
class Command:
    """One attempt's command on the simulated machine: how it will end, and how it did."""

    launch: Launch
    owner: int  # the incarnation whose runtime watches it
    plan: Plan
    ends_at: float | None  # monotonic seconds at which it ends by itself
    exit: Exit | None = None
    lost: bool = False  # killed with the machine: no journal record of how it ended

    @property
    def live(self) -> bool:
        return self.exit is None and not self.lost


_EPSILON = 1e-3  # seconds: float rounding between the wall and monotonic readings


class World:
    """The machine the engine runs on: commands outlive engine incarnations (as runners do)
    and the world knows what really happened, so the store's story can be checked."""

    def __init__(self, rng: random.Random, clock: VirtualClock) -> None:
        self.rng, self.clock = rng, clock
        self.commands: dict[str, Command] = {}
        self.running: dict[str, Command] = {}
        self.outbox: dict[int, list[Exit]] = {}  # exits not yet collected, by incarnation
        self.launches: Counter[str] = Counter()  # by occurrence id
        self.launched_since_check: set[str] = set()
        self.wakes: dict[int, WakeSignal] = {}  # live incarnations' wake signals
        self.violations: list[str] = []
        self.may_start: Callable[[Launch], list[str]] | None = None  # the simulator's checks
        self.unavailable = 0.05  # chance that a start fails before anything runs

    def start(self, launch: Launch, owner: int) -> None:
        self._check_single(launch)
        plan = self._plan(launch)
        ends = None if plan.seconds is None else self.clock.monotonic() + plan.seconds
        command = Command(launch, owner, plan, ends)
        self.commands[launch.attempt_id] = command
        self.running[launch.attempt_id] = command
        self.launches[launch.occurrence_id] += 1
        self.launched_since_check.add(launch.occurrence_id)
        if plan.failure is FailureClass.VALIDATION or plan.seconds == 0:
            self.end(command, self._natural_exit(command))

    def _check_single(self, launch: Launch) -> None:
        if launch.attempt_id in self.commands:
            self.violations.append(f"attempt {launch.attempt_id} was started twice")
        for other in self.running.values():
            if other.launch.occurrence_id == launch.occurrence_id:
                self.violations.append(
                    f"occurrence {launch.occurrence_id} dispatched while its attempt "
                    f"{other.launch.attempt_id} still runs"
                )
            elif other.launch.routine_id == launch.routine_id and not _manual(launch):
                self.violations.append(
                    f"{launch.occurrence_id} started while {other.launch.occurrence_id} of "
                    "the same routine still runs (the overlap policy allows one at a time)"
                )
        if self.may_start is not None:
            self.violations.extend(self.may_start(launch))

    def _plan(self, launch: Launch) -> Plan:
        rng = self.rng
        if rng.random() < 0.02:
            return Plan(False, 0, None, None, FailureClass.VALIDATION)
        roll = rng.random()
        seconds: float | None = (
            0 if roll < 0.35 else rng.uniform(20, 900) if roll < 0.75
            else rng.uniform(3600, 6 * 3600) if roll < 0.92 else None
        )  # fmt: skip
        code, sig = rng.choices(((0, None), (1, None), (None, 9)), weights=(78, 18, 4))[0]
        if launch.timeout is not None:
            limit = launch.timeout.total_seconds()
            if seconds is None or seconds > limit:
                return Plan(True, limit, None, 15, FailureClass.TIMED_OUT)
        return Plan(True, seconds, code, sig)

    def _natural_exit(self, command: Command) -> Exit:
        plan, now, aid = command.plan, self.clock.now_utc(), command.launch.attempt_id
        if plan.failure is FailureClass.VALIDATION:
            return Exit(aid, now, failure_class=plan.failure, message="simulated: no executable")
        if plan.failure is FailureClass.TIMED_OUT:
            confirmed = self.rng.random() > 0.1
            return Exit(aid, now, None, 15, timed_out=True, stop_confirmed=confirmed)
        return Exit(aid, now, plan.code, plan.signal, command_pid=50_000)

    def end(self, command: Command, exit_: Exit) -> None:
        command.exit = exit_
        self.running.pop(command.launch.attempt_id, None)
        if command.owner in self.wakes:
            self.outbox.setdefault(command.owner, []).append(exit_)
            self.wakes[command.owner].set(WakeReason.RUN_FINISHED)

    def cancel(self, command: Command) -> None:
        confirmed = self.rng.random() > 0.08
        now, aid = self.clock.now_utc(), command.launch.attempt_id
        self.end(command, Exit(aid, now, None, 15, cancelled=True, stop_confirmed=confirmed))

    def finish(self, command: Command) -> None:
        """A command ends now, in its own way (the simulator decides when)."""
        self.end(command, self._natural_exit(command))

    def end_due(self) -> None:
        mono = self.clock.monotonic() + _EPSILON
        for command in list(self.running.values()):
            if command.ends_at is not None and command.ends_at <= mono:
                self.end(command, self._natural_exit(command))

    def next_end(self) -> datetime | None:
        pending = [c.ends_at for c in self.running.values() if c.ends_at is not None]
        if not pending:
            return None
        wait = max(0.0, min(pending) - self.clock.monotonic())
        return self.clock.now_utc() + timedelta(seconds=wait)

    def live(self) -> list[Command]:
        return list(self.running.values())

    def forget(self, incarnation: int) -> None:
        """An incarnation died: what it had not collected waits in the journals."""
        self.wakes.pop(incarnation, None)
        self.outbox.pop(incarnation, None)

    def machine_crash(self) -> None:
        """Every command dies with the machine, and no record of its end is written."""
        for command in self.live():
            command.lost = True
        self.running.clear()


def _manual(launch: Launch) -> bool:
    return "@manual~" in launch.occurrence_id


class SimRuntime:
    """The runtime of one engine incarnation on the simulated machine (the Runtime protocol)."""

    def __init__(self, world: World, incarnation: int, wake: WakeSignal) -> None:
        self.world, self.incarnation, self.wake = world, incarnation, wake

    def start(self, launch: Launch) -> Started:
        if self.world.rng.random() < self.world.unavailable:
            raise LaunchError(FailureClass.RUNTIME_UNAVAILABLE, "simulated: no runner started")
        self.world.start(launch, self.incarnation)
        return Started(None)

    def recover(self, attempt: Unfinished, now: datetime) -> Exit | None:
        command = self.world.commands.get(attempt.attempt_id)
        if command is None:  # its runner never got to write a journal: nothing ran
            return Exit(attempt.attempt_id, now, failure_class=FailureClass.RUNTIME_UNAVAILABLE,
                        message="simulated: no journal, nothing ran")  # fmt: skip
        if command.lost:
            return unknowable(attempt, now)
        if command.exit is None:
            command.owner = self.incarnation  # adopted: its end comes through collect()
            return None
        return command.exit

    def locate(self, attempt: Unfinished) -> Unfinished:
        return as_recorded(attempt)  # simulated commands leave no directory to find

    def cancel(self, attempt_id: str) -> bool:
        command = self.world.running.get(attempt_id)
        if command is None or command.owner != self.incarnation:
            return False
        self.world.cancel(command)
        return True

    def collect(self) -> list[Exit]:
        return self.world.outbox.pop(self.incarnation, [])

    def active(self) -> int:
        return sum(1 for c in self.world.running.values() if c.owner == self.incarnation)

    def drain(self, timeout: float) -> None:
        return None


# --- engine incarnations -------------------------------------------------------------------------


class _NoLeaderLock:
    """Every incarnation lives in this one process: the flock prompt would only add a
    thread's timing to the run. The lease generation still decides everything."""

    def hold(self) -> bool:
        return True

    def release(self) -> None:
        return None

    def watch(self, wake: WakeSignal) -> None:
        return None


@dataclass
class Node:
    """One engine incarnation on the store: what a process would hold."""

    number: int
    store: Store
    wake: WakeSignal
    runtime: SimRuntime
    scheduler: Scheduler
    operator: Operator


class Identities:
    """Who each incarnation is to the lease. Half of them borrow a real helper process that
    dies with them, so a successor (and the doctor) sees the holder provably gone and takes
    over at once; the others are this test process, which stays alive, so a successor waits
    for the lease to expire — the two ways a restart meets its predecessor's lease."""

    def __init__(self) -> None:
        self._helpers: dict[int, subprocess.Popen[bytes]] = {}

    def holder(self, number: int, mortal: bool) -> Holder:
        if not mortal:
            return Holder.of_this_process()._replace(nonce=f"sim{number}")
        helper = subprocess.Popen(["sleep", "infinity"], stdin=subprocess.DEVNULL)
        self._helpers[number] = helper
        return Holder(
            socket.gethostname(), helper.pid, start_mark(helper.pid), f"sim{number}", boot_id()
        )

    def die(self, number: int) -> None:
        helper = self._helpers.pop(number, None)
        if helper is not None:
            helper.kill()
            helper.wait()

    def close(self) -> None:
        for number in list(self._helpers):
            self.die(number)


class _CountingSecrets:
    """Stands in for ``secrets`` where the engine draws a name (a probe's idempotency key)."""

    def __init__(self) -> None:
        self._count = itertools.count(1)

    def token_hex(self, nbytes: int = 16) -> str:
        return f"{next(self._count):0{2 * nbytes}x}"


@contextlib.contextmanager
def deterministic_ids() -> Iterator[None]:
    """Routine, run and key names from counters, so one seed always names things alike."""
    routine_numbers, run_numbers = itertools.count(1), itertools.count(1)
    saved = ids.new_routine_id, ids.new_run_id, runs.secrets
    ids.new_routine_id = lambda: f"r{next(routine_numbers):011x}"
    ids.new_run_id = lambda: f"run{next(run_numbers):012x}"
    runs.secrets = _CountingSecrets()  # type: ignore[assignment]
    try:
        yield
    finally:
        ids.new_routine_id, ids.new_run_id, runs.secrets = saved


@contextlib.contextmanager
def checked_rows_remembered() -> Iterator[None]:
    """The doctor hashes every audit entry and derives every occurrence id again after every
    step — most of a step's time, growing with the history. A row's verdict depends on the row
    alone, so each distinct row is judged once; every row is still read and the chain's links
    walked every step, so a changed row or a broken link is caught at once, as before."""
    saved = audit._intact, record_checks._derived_id
    audit._intact = functools.cache(audit._intact)  # type: ignore[assignment]
    record_checks._derived_id = functools.cache(record_checks._derived_id)  # type: ignore[assignment]
    try:
        yield
    finally:
        audit._intact, record_checks._derived_id = saved


# --- the simulator ---------------------------------------------------------------------------


@dataclass
class SimResult:
    seed: int
    steps: int  # steps that ran and were checked
    violation: str | None
    trace: list[str]
    counts: Counter[str]
    known: dict[str, int] = field(default_factory=dict)  # known bug → first step it showed

    def digest(self) -> str:
        return json.dumps(self.trace)

    def tolerated(self, problem: str, step: int, known: tuple[KnownBug, ...]) -> bool:
        for bug in known:
            if bug.matches(problem):
                self.known.setdefault(bug.name, step)
                return True
        return False


class Simulator:
    def __init__(self, seed: int, data_dir: Path, *, upgrades: bool = True) -> None:
        self.seed, self.data_dir = seed, data_dir
        self.rng = random.Random(seed)
        self.upgrades = random.Random(seed * 104_729 + 5) if upgrades else None
        # The policies of issue #23 draw from their own stream, so that the trajectories the
        # seeds had before them stay as they were where no policy changes what happens.
        self.policies = random.Random(seed * 15_485_863 + 23)
        # Conditions and the machine's power and network (issue #23), on a stream of their own.
        self.weather = random.Random(seed * 49_979_687 + 31)
        self.host = HostWatch(HostState(Power.AC, Network.ONLINE, "sim", "sim"),
                              on_change=self._host_changed)  # fmt: skip
        self.clock = VirtualClock(self.rng.choice(STARTS))
        self.world = World(random.Random(seed * 7919 + 1), self.clock)
        self.world.may_start = self._may_start
        self.ledger = MomentLedger()
        self.trace: list[str] = []
        self.counts: Counter[str] = Counter()
        self.names = itertools.count()
        self.keys: list[str] = []
        self.checked_attempts: set[str] = set()
        self.retried: set[str] = set()  # runs a person asked to retry
        self.incarnations = itertools.count(1)
        self.identities = Identities()
        self.looked_at = self.clock.monotonic()  # the last pass's start, on the monotonic clock
        self.blind = False  # the wall clock was set and nothing told the engine
        self.node = self._boot()

    # -- incarnations ---------------------------------------------------------------------------
    def _boot(self) -> Node:
        number = next(self.incarnations)
        wake = WakeSignal()
        store = Store.open(self.data_dir, self.clock.now_utc())
        runtime = SimRuntime(self.world, number, wake)
        holder = self.identities.holder(number, mortal=self.rng.random() < 0.5)
        scheduler = Scheduler(store, self.clock, runtime, wake, limits=Limits(), holder=holder,
                              host=self.host)  # fmt: skip
        scheduler.leader_lock = _NoLeaderLock()  # type: ignore[assignment]
        # Retention runs from the loop; real pauses and a real-time budget would make how
        # much one sweep does depend on the machine, so neither is used here.
        scheduler.sweeper.pause, scheduler.sweeper.budget = None, None
        self.world.wakes[number] = wake
        return Node(number, store, wake, runtime, scheduler, Operator(store, self.clock, wake.set))

    def _host_changed(self) -> None:
        """What the app's UPower and NetworkManager watches do: wake the scheduler."""
        self.node.wake.set(WakeReason.CONDITIONS_CHANGED)

    def host_change(self) -> None:
        """The machine goes on battery or back on the mains, off or on the network, or
        stops being able to tell."""
        if self.weather.random() < 0.5:
            power = self.weather.choice((Power.AC, Power.AC, Power.BATTERY, Power.UNKNOWN))
            self.host.set(power=power)
        else:
            network = self.weather.choice((Network.ONLINE, Network.OFFLINE, Network.UNKNOWN))
            self.host.set(network=network)
        state = self.host.state()
        self._note(f"host: {state.power} {state.network}")

    def _crash(self, machine: bool = False) -> None:
        """The process dies between two statements: nothing is flushed or released."""
        failpoints.disarm()
        self.world.forget(self.node.number)
        self.identities.die(self.node.number)
        if machine:
            self.world.machine_crash()
        self.node.store.close()  # the kernel closes its descriptors; SQLite rolls back
        self.node = self._boot()

    def close(self) -> None:
        failpoints.disarm()
        self.node.store.close()
        self.identities.close()

    # -- driving time -----------------------------------------------------------------------------
    def _pass(self, trigger: str) -> None:
        self.looked_at, self.blind = self.clock.monotonic(), False
        report = self.node.scheduler.pass_once(trigger)
        if report.error_class is not None:
            raise SimulationFailure(f"a pass failed: {report.error_class}: {report.error}")

    def advance(self, delta: timedelta) -> None:
        """Let ``delta`` pass, running every pass the engine would run on the way."""
        target = self.clock.now_utc() + delta
        if self.node.scheduler.last_report is None:
            self._pass("startup")  # a scheduler's first act, before any wait
        for _ in range(MAX_PASSES_PER_STEP):
            self.world.end_due()
            wake = self.node.wake.take()
            if wake is not None:
                self._pass(wake.value)
                continue
            due = [t for t in (self.next_look(), self.world.next_end()) if t]
            next_at = min(due, default=None)
            if next_at is None or next_at > target:
                self.clock.advance_to(max(target, self.clock.now_utc()))
                self.world.end_due()
                if not self.node.wake.is_set():
                    return
                continue
            self.clock.advance_to(max(next_at, self.clock.now_utc()))
            look = self.next_look()
            if look is not None and look <= self.clock.now_utc():
                self._pass("safety_cap" if self.blind else "deadline")
        raise SimulationFailure(f"more than {MAX_PASSES_PER_STEP} passes in one step (livelock)")

    def next_look(self) -> datetime | None:
        """When the engine's loop looks next: at its deadline, or — once the wall clock was set
        without a word — at the latest a safety cap of monotonic time after its last look (the
        production loop waits on the monotonic clock, capped). Only then: a cap's look that
        finds the deadline right changes nothing, and modelling every one slows each step."""
        deadline = self.node.scheduler.deadline
        if not self.blind:
            return deadline
        waited = timedelta(seconds=self.clock.monotonic() - self.looked_at)
        capped = self.clock.now_utc() + max(SAFETY_CAP - waited, timedelta(0))
        return capped if deadline is None else min(deadline, capped)

    # -- one step ---------------------------------------------------------------------------------
    def step(self) -> None:
        if self.upgrades is not None and self.upgrades.random() < TZ_UPGRADE_CHANCE:
            self.counts["tz_upgrade"] += 1
            self.tz_upgrade()
        if self.weather.random() < HOST_CHANGE_CHANCE:
            self.counts["host_change"] += 1
            self.host_change()
        action = self._choose()
        self.counts[action.__name__] += 1
        try:
            action()
            self.advance(timedelta(0))
        except failpoints.FailpointHit as hit:
            self._note(f"crashed at {hit}")
            self._crash()
            self.advance(timedelta(0))

    def _choose(self) -> Callable[[], None]:
        actions = (
            (self.act_advance, 30), (self.act_add, 8), (self.act_edit, 5), (self.act_pause, 3),
            (self.act_resume, 4), (self.act_delete, 1.5), (self.act_pause_all, 0.7),
            (self.act_resume_all, 1.5), (self.act_quarantine, 1), (self.act_release, 2),
            (self.act_probe, 1), (self.act_run_now, 4), (self.act_cancel, 3),
            (self.act_reconcile, 5), (self.act_retry, 2), (self.act_finish, 6),
            (self.act_suspend, 3), (self.act_jump, 3), (self.act_crash, 2.5),
            (self.act_crash_at_boundary, 2), (self.act_machine_crash, 0.7),
            (self.act_restart, 1), (self.act_flaky_runtime, 1),
        )  # fmt: skip
        chosen: Callable[[], None] = self.rng.choices(
            [a for a, _ in actions], weights=[w for _, w in actions]
        )[0]
        return chosen

    def _note(self, text: str) -> None:
        self.trace.append(f"{self.clock.now_utc():%Y-%m-%d %H:%M:%S}Z {text}")

    def _operator(self, what: str, command: Callable[[], object]) -> None:
        """A person's command; a refusal is an answer, a store bug is a failure."""
        try:
            command()
            self._note(what)
        except StoreBug:
            raise
        except (CovenError, ValueError) as refused:
            self._note(f"{what}: refused ({str(refused)[:80]})")

    # -- what a person does -----------------------------------------------------------------------
    def _spec(self) -> RevisionSpec:
        rng = self.rng
        spec = RevisionSpec(
            schedule=rng.choice(SCHEDULES),
            timezone=rng.choice(ZONES),
            argv=("/usr/bin/sim",),
            misfire=rng.choice(list(MisfirePolicy)),
            grace=rng.choice((None, timedelta(minutes=20), timedelta(hours=3))),
            overlap=rng.choice(list(OverlapPolicy)),
            timeout=rng.choice((None, None, timedelta(minutes=10), timedelta(hours=2))),
            retries=rng.choice((0, 0, 1, 2)),
            idempotent=rng.random() < 0.3,
            quarantine_after=rng.choice((2, 3, 5)),
        )
        return self._policies(spec)

    def _policies(self, spec: RevisionSpec) -> RevisionSpec:
        """The policies of DESIGN §14 a person might set, each in some of the revisions."""
        rng, today = self.policies, self.clock.now_utc().date()
        days = rng.choice((0, 0, 1, 3))
        excluded = {today + timedelta(days=rng.randint(-1, 12)) for _ in range(days)}
        shadow = rng.random() < 0.2
        runs = rng.choice((None, None, None, 1, 2, 4))
        runtime = rng.choice((None, None, None, timedelta(minutes=30), timedelta(hours=3)))
        rest = rng.choice((None, None, timedelta(minutes=20), timedelta(hours=1)))
        rest_max = rng.choice((None, timedelta(hours=2)))
        group = rng.choice((None, None, "disk", "net"))
        names = self._names()
        after = rng.choice(names) if names and rng.random() < 0.25 else None
        return replace(
            spec, except_dates=tuple(sorted(excluded)), shadow=shadow, max_runs_per_day=runs,
            max_runtime_per_day=runtime, cooldown=rest, cooldown_max=rest_max, group=group,
            after=after, after_outcome=rng.choice(("succeeded", "finished")),
            on_ac_power=self.weather.random() < 0.25, when_online=self.weather.random() < 0.25,
            keep_awake=self.weather.random() < 0.2,
        )  # fmt: skip

    def act_add(self) -> None:
        if len(self._names()) >= MAX_ROUTINES:
            self.act_edit()
            return
        name, spec = f"r{next(self.names)}", self._spec()
        what = f"add {name} {spec.schedule} {spec.timezone} retries={spec.retries}"
        self._operator(what, lambda: self.node.operator.add_routine(name, spec))

    def act_edit(self) -> None:
        name = self._pick(self._names())
        if name is None:
            return
        fresh = self._spec()
        field_name = self.rng.choice(("schedule", "timezone", "retries", "timeout", "overlap",
                                      "misfire", "idempotent"))  # fmt: skip
        if self.policies.random() < 0.3:
            field_name = self.policies.choice(_POLICY_FIELDS)
        value = getattr(fresh, field_name)

        def change(spec: RevisionSpec) -> RevisionSpec:
            return replace(spec, **{field_name: value})

        what = f"edit {name} {field_name}={value}"
        self._operator(what, lambda: self.node.operator.edit_routine(name, change))

    def act_pause(self) -> None:
        self._on_routine("pause", lambda n: self.node.operator.pause(n, "sim"))

    def act_resume(self) -> None:
        self._on_routine("resume", self.node.operator.resume, state="paused")

    def act_delete(self) -> None:
        self._on_routine("delete", self.node.operator.delete_routine)

    def act_quarantine(self) -> None:
        self._on_routine("quarantine", lambda n: self.node.operator.quarantine(n, "sim"))

    def act_release(self) -> None:
        self._on_routine("release", self.node.operator.release, state="quarantined")

    def act_probe(self) -> None:
        self._on_routine("probe", self.node.operator.probe, state="quarantined")

    def act_pause_all(self) -> None:
        self._operator("pause all", lambda: self.node.operator.pause_all("sim"))

    def act_resume_all(self) -> None:
        self._operator("resume all", self.node.operator.resume_all)

    def act_run_now(self) -> None:
        name = self._pick(self._names())
        if name is None:
            return
        if self.keys and self.rng.random() < 0.3:
            key = self.rng.choice(self.keys)  # the same request again
        else:
            key = f"key{len(self.keys)}"
            self.keys.append(key)
        self._operator(f"run-now {name} {key}", lambda: self.node.operator.run_now(name, key))

    def act_cancel(self) -> None:
        run = self._pick(self._runs("state IN ('planned', 'claimed', 'running')"))
        if run is not None:
            self._operator(f"cancel {run}", lambda: self.node.operator.cancel(run, "sim"))

    def act_retry(self) -> None:
        run = self._pick(self._runs("disposition IN ('failed', 'cancelled', 'timed_out')"))
        if run is not None:
            self.retried.add(run)
            self._operator(f"retry {run}", lambda: self.node.operator.retry(run))

    def act_reconcile(self) -> None:
        run = self._pick(self._runs("disposition = 'recovery_required'"))
        if run is None:
            return
        outcome = self.rng.choice(list(Outcome))
        verified = outcome is Outcome.RETRY

        def decide() -> None:
            self.node.operator.reconcile(run, outcome, "sim", verified_no_side_effect=verified)

        self._operator(f"reconcile {run} {outcome.value}", decide)
        name = self._routine_of_run(run)
        if name is not None and self.rng.random() < 0.8:
            self._operator(f"resume {name}", lambda: self.node.operator.resume(name))

    def _on_routine(self, verb: str, command: Callable[[str], object], state: str = "") -> None:
        name = self._pick(self._names(state))
        if name is not None:
            self._operator(f"{verb} {name}", lambda: command(name))

    # -- what the machine does --------------------------------------------------------------------
    def act_advance(self) -> None:
        roll = self.rng.random()
        if roll < 0.6:
            delta = timedelta(minutes=self.rng.randint(1, 90))
        elif roll < 0.94:
            delta = timedelta(hours=self.rng.uniform(2, 12))
        else:
            delta = timedelta(days=self.rng.uniform(1, 2.5))
        self._note(f"advance {delta}")
        self.advance(delta)

    def act_finish(self) -> None:
        live = self.world.live()
        if live:
            command = self.rng.choice(live)
            self._note(f"command of {command.launch.attempt_id} ends")
            self.world.finish(command)

    def act_suspend(self) -> None:
        asleep = timedelta(minutes=self.rng.randint(10, 60 * 40))
        notify = self.rng.random() < 0.7
        self._note(f"sleep {asleep} (notified: {notify})")
        self.clock.suspend(asleep, notify=False)
        if notify:
            self.node.wake.set(WakeReason.SYSTEM_RESUMED)

    def act_jump(self) -> None:
        size = timedelta(minutes=self.rng.randint(5, 6 * 60)) * self.rng.choice((1, -1))
        notify = self.rng.random() < 0.7
        self._note(f"wall clock jumps {size} (notified: {notify})")
        self.clock.jump_wall(size, notify=False)
        if notify:
            self.node.wake.set(WakeReason.CLOCK_JUMPED)
        else:
            self.blind = True

    def act_crash(self) -> None:
        self._note(f"engine {self.node.number} crashes")
        self._crash()

    def act_machine_crash(self) -> None:
        self._note(f"the machine crashes under engine {self.node.number}")
        self._crash(machine=True)

    def act_crash_at_boundary(self) -> None:
        point = self.rng.choice(CRASH_POINTS)
        self._note(f"arm a crash at {point}")
        failpoints.arm(point, "raise")
        try:
            self.act_advance()
        finally:
            failpoints.disarm()

    def act_restart(self) -> None:
        """An orderly quit and a new start: the runner-held commands keep running."""
        self._note(f"engine {self.node.number} quits and restarts")
        self.node.scheduler.shutdown()
        self.world.forget(self.node.number)
        self.identities.die(self.node.number)
        self.node.store.close()
        self.node = self._boot()

    def tz_upgrade(self) -> None:
        """An orderly restart onto a tz database that lost a zone in use, or has it again."""
        assert self.upgrades is not None
        if TZ.lost:
            self._note(f"tz database upgrade: {', '.join(sorted(TZ.lost))} is back")
            TZ.lost = frozenset()
        else:
            TZ.lost = frozenset({self.upgrades.choice(ZONES[:-1])})  # never UTC
            self._note(f"tz database upgrade: {', '.join(TZ.lost)} is gone")
        routines.timetable.cache_clear()  # a new process binds afresh
        self.act_restart()

    def act_flaky_runtime(self) -> None:
        self.world.unavailable = self.rng.choice((0.0, 0.05, 0.05, 0.5))
        self._note(f"runtime start failures now {self.world.unavailable:.0%}")

    # -- choosing targets ---------------------------------------------------------------------------
    def _pick(self, options: list[str]) -> str | None:
        return self.rng.choice(options) if options else None

    def _names(self, state: str = "") -> list[str]:
        where = "state = ?" if state else "state != 'deleted' AND ? = ''"
        sql = f"SELECT name FROM routines WHERE {where} ORDER BY name"
        return [row[0] for row in self.node.store.conn.execute(sql, (state,))]

    def _runs(self, where: str) -> list[str]:
        sql = f"SELECT run_id FROM occurrences WHERE run_id IS NOT NULL AND {where} ORDER BY run_id"
        return [row[0] for row in self.node.store.conn.execute(sql)]

    def _routine_of_run(self, run: str) -> str | None:
        row = self.node.store.conn.execute(
            "SELECT r.name FROM occurrences o JOIN routines r ON r.id = o.routine_id "
            "WHERE o.run_id = ? AND r.state = 'paused'",
            (run,),
        ).fetchone()
        return None if row is None else str(row[0])

    # -- the invariants -----------------------------------------------------------------------------
    def _conditions_met(self, launch: Launch, on_ac: bool, online: bool) -> list[str]:
        """A new scheduled or triggered run never starts while its condition is unmet."""
        state = self.host.state()
        unmet = [name for name, asked, met in (("on AC power", on_ac, state.on_ac_power()),
                                                ("online", online, state.online()))
                 if asked and not met]  # fmt: skip
        return [f"{launch.occurrence_id} started while not {name}" for name in unmet]

    def _may_start(self, launch: Launch) -> list[str]:
        """At the moment a command starts: would a person who paused, quarantined, deleted or
        still has to decide about this routine expect it to start? (A moment decided before
        its zone was lost may still start: its instant is known, and the command needs no
        zone; the ledger proves that nothing is decided after.)"""
        conn = self.node.store.conn
        state, forced, probe, kind, run, shadow, on_ac, online = conn.execute(
            "SELECT r.state, o.forced, o.probe, o.kind, o.run_id, v.shadow, v.on_ac_power, "
            "v.when_online FROM occurrences o "
            "JOIN routines r ON r.id = o.routine_id JOIN revisions v ON v.routine_id = "
            "o.routine_id AND v.number = o.revision WHERE o.id = ?",
            (launch.occurrence_id,),
        ).fetchone()
        by_person = kind == "manual" or forced or run in self.retried
        problems = []
        if shadow:
            problems.append(f"{launch.occurrence_id} of a trial (shadow) revision started")
        if kind != "manual" and launch.attempt_id.endswith(".1"):
            problems.extend(_within_runs_budget(conn, launch))
            problems.extend(_after_the_cooldown(conn, launch))
            if not (forced or probe):
                problems.extend(self._conditions_met(launch, bool(on_ac), bool(online)))
        problems.extend(self._group_is_free(conn, launch))
        if state == "deleted" or (state == "quarantined" and not probe):
            problems.append(f"{launch.occurrence_id} started although its routine is {state}")
        elif state == "paused" and not by_person:
            problems.append(f"{launch.occurrence_id} started although its routine is paused")
        awaiting = conn.execute(
            "SELECT run_id FROM occurrences WHERE routine_id = ? AND id != ? "
            "AND disposition = 'recovery_required'",
            (launch.routine_id, launch.occurrence_id),
        ).fetchone()
        if awaiting is not None:
            problems.append(
                f"{launch.occurrence_id} started while run {awaiting[0]} of its routine "
                "awaits a decision"
            )
        return problems

    def _group_is_free(self, conn: apsw.Connection, launch: Launch) -> list[str]:
        """No command of another routine of the launch's group runs on the machine now."""
        group = _group_of(conn, launch.occurrence_id)
        if group is None:
            return []
        return [
            f"{launch.occurrence_id} started while {other.launch.occurrence_id} of its group "
            f"{group} still runs"
            for other in self.world.live()
            if other.launch.routine_id != launch.routine_id
            and _group_of(conn, other.launch.occurrence_id) == group
        ]

    def violations(self) -> list[str]:
        now = self.clock.now_utc()
        found = list(self.world.violations)
        found += audit_store(self.node.store, now, self.ledger)
        found += self._truth()
        found += self._launch_bounds()
        if self._leading():
            found += self._nothing_orphaned()
            found += self._nothing_due_undecided(now)
            found += self._retries_wake_in_time(now)
        return found

    def _leading(self) -> bool:
        """This incarnation leads and has recovered what earlier ones left."""
        scheduler = self.node.scheduler
        held = lease.current(self.node.store.conn)
        mine = scheduler.lease is not None and held is not None
        if not mine or held.generation != scheduler.lease.generation:  # type: ignore[union-attr]
            return False
        return scheduler._recovered_generation == held.generation

    def _truth(self) -> list[str]:
        """What the store says happened, against what happened on the machine."""
        rows = self.node.store.conn.execute(
            "SELECT id, failure_class, exit_code FROM attempts WHERE state = 'settled'"
        )
        problems = []
        for aid, failure, code in rows:
            if aid not in self.checked_attempts:
                self.checked_attempts.add(aid)
                problems.extend(_against_truth(aid, failure, code, self.world.commands.get(aid)))
        return problems

    def _launch_bounds(self) -> list[str]:
        """Automatic attempts stay within the retry policy; people may add more."""
        problems = []
        for oid in sorted(self.world.launched_since_check):
            launched, allowed = (
                self.world.launches[oid],
                _allowed_launches(self.node.store.conn, oid),
            )
            if launched > allowed:
                problems.append(
                    f"occurrence {oid} was dispatched {launched} times ({allowed} allowed)"
                )
        self.world.launched_since_check.clear()
        return problems

    def _nothing_orphaned(self) -> list[str]:
        conn = self.node.store.conn
        unsettled = {
            aid: state
            for aid, state in conn.execute(
                "SELECT id, state FROM attempts WHERE state != 'settled'"
            )
        }
        problems = [
            f"command of attempt {c.launch.attempt_id} runs but the store has it "
            f"{unsettled.get(c.launch.attempt_id, 'settled')}"
            for c in self.world.live()
            if unsettled.get(c.launch.attempt_id) not in ("dispatching", "running")
        ]
        for aid, state in unsettled.items():
            command = self.world.commands.get(aid)
            if command is None or not command.live:
                ended = "no command" if command is None else "its command ended"
                problems.append(f"attempt {aid} is still {state} in the store but {ended}")
        return problems

    def _retries_wake_in_time(self, now: datetime) -> list[str]:
        """A retry waiting out its backoff is a deadline: the scheduler must wake for it (after
        a wall-clock step nobody announced, at the latest at its safety cap: see next_look)."""
        retry_at = occurrences.earliest_retry(self.node.store.conn, now)
        deadline = self.next_look()
        if retry_at is None or (deadline is not None and deadline <= retry_at):
            return []
        return [
            f"a retry due at {retry_at:%Y-%m-%d %H:%M:%S}Z waits for the next wake ({deadline})"
        ]

    def _nothing_due_undecided(self, now: datetime) -> list[str]:
        conn = self.node.store.conn
        if scheduling_paused(conn):
            return []
        rows = conn.execute(
            "SELECT name, next_due FROM routines WHERE state = 'active' AND next_due <= ?",
            (instant_text(now),),
        )
        return [f"routine {name}: the moment at {due} is due but undecided" for name, due in rows]


def _group_of(conn: apsw.Connection, occurrence_id: str) -> str | None:
    row = conn.execute(
        "SELECT v.group_name FROM occurrences o JOIN revisions v ON v.routine_id = o.routine_id "
        "AND v.number = o.revision WHERE o.id = ?",
        (occurrence_id,),
    ).fetchone()
    return None if row is None else row[0]


def _budget_zone(key: str) -> tzinfo:
    """The zone the budget's days are in: the routine's, or UTC while the tz database in use
    has lost it (DESIGN §14; seed 895461265 judged a lost zone's days by the system's
    database, which still had it)."""
    try:
        return tzdb.zone(key)
    except ZoneError:
        return UTC


def _within_runs_budget(conn: apsw.Connection, launch: Launch) -> list[str]:
    """A scheduled run starts only while its local day (in the revision's zone) has started
    fewer runs than the revision's budget; a person's runs count too (DESIGN §14)."""
    most, zone, claimed = conn.execute(
        "SELECT v.max_runs_per_day, v.timezone, a.claimed_at FROM attempts a JOIN occurrences "
        "o ON o.id = a.occurrence_id JOIN revisions v ON v.routine_id = o.routine_id AND "
        "v.number = o.revision WHERE a.id = ?",
        (launch.attempt_id,),
    ).fetchone()
    if most is None:
        return []
    days_in = _budget_zone(zone)
    local = instant_from(claimed).astimezone(days_in).date()
    rows = conn.execute(
        "SELECT a.claimed_at FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
        "WHERE o.routine_id = ? AND a.number = 1 AND a.occurrence_id != ?",
        (launch.routine_id, launch.occurrence_id),
    )
    before = sum(
        1 for (at,) in rows
        if at <= claimed and instant_from(at).astimezone(days_in).date() == local
    )  # fmt: skip
    if before < most:
        return []
    return [
        f"{launch.occurrence_id} started as run {before + 1} of {local}, over its budget {most}"
    ]


def _after_the_cooldown(conn: apsw.Connection, launch: Launch) -> list[str]:
    """A scheduled run never starts while its routine rests after failures in a row: the
    revision's cooldown, doubled per further failure, capped, from the last failure."""
    rest, cap, failures, claimed = conn.execute(
        "SELECT v.cooldown_seconds, v.cooldown_max_seconds, r.consecutive_failures, "
        "a.claimed_at FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id JOIN "
        "revisions v ON v.routine_id = o.routine_id AND v.number = o.revision JOIN routines r "
        "ON r.id = o.routine_id WHERE a.id = ?",
        (launch.attempt_id,),
    ).fetchone()
    last = conn.execute(
        "SELECT max(settled_at) FROM occurrences WHERE routine_id = ? AND probe = 0 "
        "AND disposition IN ('failed', 'timed_out')",
        (launch.routine_id,),
    ).fetchone()[0]
    if rest is None or not failures or last is None:
        return []
    length = min(rest * 2 ** (failures - 1), max(cap or 86_400, rest))
    until = instant_from(last) + timedelta(seconds=length)
    if instant_from(claimed) >= until:
        return []
    return [f"{launch.occurrence_id} started at {claimed} inside its cooldown until {until}"]


def _against_truth(
    aid: str, failure: str | None, code: int | None, command: Command | None
) -> list[str]:
    if failure is None:
        if command is None or command.exit is None or command.exit.classify() is not None:
            return [f"attempt {aid} is recorded as a success that did not happen"]
        return []
    if command is None:
        return []  # never started: whatever it says, nothing ran
    if failure == FailureClass.RUNTIME_UNAVAILABLE.value and command.ran:
        return [f"attempt {aid} ran but is recorded as 'nothing ran'"]
    if code is not None and (command.exit is None or command.exit.exit_code != code):
        return [f"attempt {aid} is recorded with exit status {code}, not what happened"]
    return []


def _allowed_launches(conn: apsw.Connection, occurrence_id: str) -> int:
    row = conn.execute(
        "SELECT v.retries, v.idempotent, (SELECT count(*) FROM reconciliations c "
        "WHERE c.occurrence_id = o.id AND c.outcome = 'retry'), (SELECT count(*) FROM events e "
        "WHERE e.occurrence_id = o.id AND e.kind = 'retry_scheduled' "
        "AND json_extract(e.data, '$.manual') = 1) FROM occurrences o JOIN revisions v "
        "ON v.routine_id = o.routine_id AND v.number = o.revision WHERE o.id = ?",
        (occurrence_id,),
    ).fetchone()
    if row is None:
        return 0
    retries, idempotent, decided, manual = row
    automatic = max(1 + retries, RUNTIME_UNAVAILABLE_TRIES, 1 + max(retries, 1) * idempotent)
    return automatic * (1 + decided + manual)


def run_simulation(
    seed: int, steps: int, data_dir: Path, *, tolerate: tuple[KnownBug, ...] = (),
    upgrades: bool = True,
) -> SimResult:  # fmt: skip
    """Run ``steps`` steps of seed ``seed``; stops at the first violated invariant that is not
    one of the known engine bugs in ``tolerate`` (those are counted and the run goes on).
    Without ``upgrades`` the tz database never changes: seeds found before it could replay
    their steps."""
    with deterministic_ids(), checked_rows_remembered(), TZ.installed():
        sim = Simulator(seed, data_dir, upgrades=upgrades)
        try:
            return _run(sim, steps, tolerate)
        finally:
            sim.close()


def _run(sim: Simulator, steps: int, tolerate: tuple[KnownBug, ...]) -> SimResult:
    result = SimResult(sim.seed, 0, None, sim.trace, sim.counts)
    for number in range(1, steps + 1):
        try:
            sim.step()
            problems = sim.violations()
        except Exception as error:  # any escape from the engine is a finding
            problems = [_escaped(error)]
        unknown = [p for p in problems if not result.tolerated(p, number, tolerate)]
        if unknown:
            result.violation = f"SIMULATION FAILED: seed={sim.seed} step={number}: {unknown[0]}"
            break
        result.steps = number
    return result


def _escaped(error: Exception) -> str:
    where = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__}: {error} (at {where.filename}:{where.lineno})"


def describe(result: SimResult, tail: int = 25, *, strict: bool = False) -> str:
    """The violation, the replay command and the last steps that led to it."""
    mode = "COVEN_SIM_STRICT=1 " if strict else ""
    lines = [
        result.violation or f"seed={result.seed}: {result.steps} steps, no violation",
        f"replay: {mode}COVEN_SIM_SEED={result.seed} COVEN_SIM_STEPS={result.steps + 1} "
        "python -m pytest tests/core/test_simulation.py",
        "last steps:",
        *(f"  {line}" for line in result.trace[-tail:]),
    ]
    return "\n".join(lines)
