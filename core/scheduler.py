"""The scheduler loop (CONTRACT §3.1, §9.1, §11).

A pass: take or renew the lease → settle what finished → recover what a previous leader left →
plan what is due → claim (bounded) → dispatch → record the pass. Then sleep until the next
deadline or a wake — never a polling loop. The same loop runs in ``coven daemon`` and on the
tray app's worker thread.

Write transactions are short and never span a wait on a process: the dispatch decision is
committed, then the runtime is asked to start, then the start is committed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

import apsw

from coven_core import events, lease, occurrences, routines
from coven_core.clock import Clock, WakeReason, WakeSignal
from coven_core.events import EventKind
from coven_core.lease import Fenced, Holder, Lease
from coven_core.model import MissedCause
from coven_core.occurrences import Stamp
from coven_core.passes import PassReport, insert_pass
from coven_core.planning import claim_one, plan_routine, recover_attempt, scheduling_paused
from coven_core.runtime.base import Exit, Launch, LaunchError, Runtime
from coven_core.store.errors import StoreEnvironmentError
from coven_core.store.store import Store
from coven_core.watch import DriftWatch

log = logging.getLogger(__name__)

_JUST_AFTER = timedelta(microseconds=1)


@dataclass(frozen=True)
class Limits:
    """Backpressure (§11): what one pass may plan and claim, and how much may run at once."""

    plan_batch: int = 256
    claim_batch: int = 64
    max_active: int = 4
    drain_timeout: float = 10.0
    retry_after_store_error: timedelta = timedelta(seconds=5)


class Scheduler:
    """One process's scheduler over one store."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        runtime: Runtime,
        wake: WakeSignal,
        *,
        limits: Limits | None = None,
        holder: Holder | None = None,
    ) -> None:
        self.store, self.clock, self.runtime, self.wake = store, clock, runtime, wake
        self.limits = limits or Limits()
        self.holder = holder or Holder.of_this_process()
        self.lease: Lease | None = None
        self.drift = DriftWatch(clock)
        self.deadline: datetime | None = None
        self.last_report: PassReport | None = None

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> None:
        """Passes until shutdown: one at once at startup, then one per deadline or wake."""
        self.pass_once("startup")
        while True:
            reason = self.clock.sleep_until_or_wake(self.deadline, self.wake)
            if reason is WakeReason.SHUTDOWN:
                self.shutdown()
                return
            self.pass_once(reason.value)

    def pass_once(self, trigger: str) -> PassReport:
        clock_start = self.clock.monotonic()
        report = PassReport(trigger, self.clock.now_utc())
        try:
            self._pass(report)
        except Fenced as error:
            self._stand_down(report, str(error))
        except StoreEnvironmentError as error:
            report.error_class, report.error = "store_" + error.kind, str(error)
            report.deadline = report.started_at + self.limits.retry_after_store_error
            log.warning("pass failed, retrying later: %s", error)
        report.duration_ms = (self.clock.monotonic() - clock_start) * 1000
        self.deadline = report.deadline
        self._record_pass(report)
        self.last_report = report
        return report

    def shutdown(self) -> None:
        """Drain for a bounded time, settle what ended, record what was left running."""
        self.runtime.drain(self.limits.drain_timeout)
        if self.lease is not None:
            self.pass_once("shutdown")
        left = self.runtime.active()
        with self.store.write() as conn:
            now = self.clock.now_utc()
            events.record(conn, now, EventKind.SHUTDOWN, left_running=left)
            lease.release(conn, self.holder, now)

    # -- one pass ---------------------------------------------------------------------------
    def _pass(self, report: PassReport) -> None:
        now = report.started_at
        cause = self.drift.cause(report.trigger, now)
        with self.store.write() as conn:
            self._take_lease(conn, report, now)
            if self.lease is None:
                return
            self.drift.record(conn, now, report.trigger)
        report.settled += self._settle_exits()
        report.recovered += self._recover(now)
        report.planned += self._plan(now, cause, report)
        launches = self._claim(now, report)
        report.dispatched += sum(self._dispatch(launch) for launch in launches)
        report.deadline = self._next_deadline(now, report)

    def _take_lease(self, conn: apsw.Connection, report: PassReport, now: datetime) -> None:
        previous = self.lease.generation if self.lease else None
        self.lease = lease.acquire(conn, self.holder, now)
        if self.lease is None:
            held = lease.current(conn)
            report.role = "standby"
            report.deadline = held.expires_at if held else now
            return
        report.generation = self.lease.generation
        if previous != self.lease.generation:
            events.record(
                conn, now, EventKind.LEADER_CHANGED,
                generation=self.lease.generation, holder=self.lease.fingerprint(),
            )  # fmt: skip

    def _stamp(self) -> Stamp:
        assert self.lease is not None
        return Stamp(self.clock.now_utc(), self.lease.generation)

    def _stand_down(self, report: PassReport, why: str) -> None:
        log.warning("standing down: %s", why)
        self.lease = None
        report.role, report.error_class, report.error = "standby", "fenced", why
        with self.store.read() as conn:
            held = lease.current(conn)
        report.deadline = held.expires_at if held else report.started_at

    # -- settle and recover -----------------------------------------------------------------
    def _settle_exits(self) -> int:
        exits = self.runtime.collect()
        if not exits:
            return 0
        stamp = self._stamp()
        with self.store.write() as conn:
            lease.check_fence(conn, stamp.generation)
            settled = [occurrences.settle_exit(conn, exit_, stamp) for exit_ in exits]
        return sum(1 for routine_id in settled if routine_id is not None)

    def _recover(self, now: datetime) -> int:
        """Attempts a previous leader left unfinished. This runtime cannot adopt them (the
        runner, issue #4, will): one that was never dispatched is safe to plan again; one
        that may have started is ambiguous and waits for a person."""
        stamp = self._stamp()
        with self.store.write() as conn:
            lease.check_fence(conn, stamp.generation)
            rows = list(
                conn.execute(
                    "SELECT a.id, a.state, o.id, o.routine_id FROM attempts a JOIN occurrences o "
                    "ON o.id = a.occurrence_id WHERE a.state != 'settled' AND a.generation < ?",
                    (stamp.generation,),
                )
            )
            for attempt_id, state, occurrence_id, routine_id in rows:
                recover_attempt(conn, attempt_id, state, occurrence_id, routine_id, stamp)
        return len(rows)

    # -- plan -------------------------------------------------------------------------------
    def _plan(self, now: datetime, cause: MissedCause, report: PassReport) -> int:
        stamp = self._stamp()
        with self.store.write() as conn:
            lease.check_fence(conn, stamp.generation)
            if scheduling_paused(conn):
                return 0
            due = routines.due(conn, now, self.limits.plan_batch)
            planned = 0
            for routine in due:
                planned += plan_routine(conn, routine, now, cause, stamp)
                report.touched.add(routine.id)
        return planned

    # -- claim and dispatch -----------------------------------------------------------------
    def _claim(self, now: datetime, report: PassReport) -> list[Launch]:
        stamp = self._stamp()
        with self.store.write() as conn:
            lease.check_fence(conn, stamp.generation)
            capacity = self.limits.max_active - occurrences.active_count(conn)
            launches: list[Launch] = []
            for item in occurrences.waiting(conn, now, self.limits.claim_batch):
                if len(launches) >= capacity:
                    break
                launch = claim_one(conn, item, stamp)
                if launch is not None:
                    launches.append(launch)
                    occurrences.mark_dispatching(conn, launch, stamp)
                report.touched.add(item.routine_id)
        report.claimed += len(launches)
        return launches

    def _dispatch(self, launch: Launch) -> int:
        """Start one claimed attempt. The decision is already committed (crash point 4)."""
        try:
            pid = self.runtime.start(launch)
        except LaunchError as error:
            self._settle_launch_failure(launch, error)
            return 0
        stamp = self._stamp()
        with self.store.write() as conn:
            lease.check_fence(conn, stamp.generation)
            occurrences.mark_running(conn, launch, pid, stamp)
        return 1

    def _settle_launch_failure(self, launch: Launch, error: LaunchError) -> None:
        stamp = self._stamp()
        exit_ = Exit(launch.attempt_id, stamp.now, failure_class=error.failure_class,
                     message=str(error))  # fmt: skip
        with self.store.write() as conn:
            lease.check_fence(conn, stamp.generation)
            occurrences.settle_exit(conn, exit_, stamp)

    # -- deadline and bookkeeping -----------------------------------------------------------
    def _next_deadline(self, now: datetime, report: PassReport) -> datetime | None:
        if report.planned >= self.limits.plan_batch or report.claimed >= self.limits.claim_batch:
            return now  # more work than one pass may do: go again at once
        with self.store.read() as conn:
            if scheduling_paused(conn):
                return None
            return routines.earliest_due(conn)

    def _record_pass(self, report: PassReport) -> None:
        try:
            with self.store.write() as conn:
                insert_pass(conn, self.holder.token, report)
        except StoreEnvironmentError as error:  # the pass record is best-effort
            log.warning("could not record the pass: %s", error)
