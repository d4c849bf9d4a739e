"""The scheduler loop (DESIGN §3, §9, §11).

A pass: take or renew the lease → settle what finished → recover what a previous leader left →
plan what is due → claim (bounded) → dispatch → record the pass. Then sleep until the next
deadline or a wake — never a polling loop. The same loop runs in ``coven daemon`` and on the
tray app's worker thread.

Write transactions are short and never span a wait on a process: the dispatch decision is
committed, then the runtime is asked to start, then the start is committed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import apsw

from coven_core import events
from coven_core.clock import Clock, WakeReason, WakeSignal
from coven_core.events import EventKind
from coven_core.host import Host, PortableHost
from coven_core.integrity import audit
from coven_core.integrity.retention import Sweeper
from coven_core.model import MissedCause
from coven_core.operations import settings
from coven_core.runtime.base import Exit, Launch, LaunchError, Runtime, Started
from coven_core.scheduling import (
    agenda,
    cancellation,
    lease,
    occurrences,
    overrun,
    receipts,
    recovery,
    routines,
)
from coven_core.scheduling.awake import SleepGuard, in_flight, keep_awake_runs
from coven_core.scheduling.conditions import Gate
from coven_core.scheduling.decisions import claim_one, plan_routine, review
from coven_core.scheduling.delivery import DeliveryError
from coven_core.scheduling.lease import Fenced, Holder, Lease
from coven_core.scheduling.liveness import LeaderLock
from coven_core.scheduling.occurrences import Stamp
from coven_core.scheduling.passes import PassReport, insert_pass
from coven_core.scheduling.revision_cache import RevisionCache
from coven_core.scheduling.settlement import settle_attempt
from coven_core.scheduling.watch import DriftWatch
from coven_core.store.errors import StoreEnvironmentError
from coven_core.store.store import Store
from coven_core.system import failpoints

log = logging.getLogger(__name__)

_JUST_AFTER = timedelta(microseconds=1)
#: The trigger of the last pass before a scheduler stops: it settles and records, never starts.
SHUTDOWN = "shutdown"


@dataclass(frozen=True)
class Limits:
    """Backpressure (§11): what one pass may plan and claim, and how much may run at once."""

    plan_batch: int = 256
    claim_batch: int = 64
    max_active: int = 4
    drain_timeout: float = 10.0
    first_sweep_after: timedelta = timedelta(minutes=10)  # retention (§11)
    audit_keep: int = 100_000
    deliveries: int = 8
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
        listener: Callable[[PassReport], None] | None = None,
        host: Host | None = None,
    ) -> None:
        self.store, self.clock, self.runtime, self.wake = store, clock, runtime, wake
        self.host: Host = host or PortableHost()  # the machine's state, like the clock
        self.awake = SleepGuard(self.host.inhibit, self.host.release)
        self.limits = limits or Limits()
        self.listener = listener
        self.holder = holder or Holder.of_this_process()
        self.lease: Lease | None = None
        self.drift = DriftWatch(clock)
        self.revisions = RevisionCache()
        self.deadline: datetime | None = None
        self._condition_wait: datetime | None = None  # when a moment's wait for one ends
        self.last_report: PassReport | None = None
        self._recovered_generation: int | None = None
        self._unsettled: list[Exit] = []  # exits seen but not yet committed
        self._cancels_sent: set[str] = set()
        self._unrecorded: list[tuple[Launch, Started | LaunchError]] = []
        # The first sweep a little after start, so a launch stays quick.
        self.sweeper = Sweeper(last=clock.now_utc() - Sweeper.every + self.limits.first_sweep_after)
        self.leader_lock = LeaderLock(store.data_dir / "leader.lock")

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> None:
        """Passes until shutdown: one at once at startup, then one per deadline or wake."""
        self.awake.take_delay()
        self.pass_once("startup")
        while True:
            reason = self.clock.sleep_until_or_wake(self.deadline, self.wake)
            if reason is WakeReason.SHUTDOWN:
                self.shutdown()
                return
            self.pass_once(reason.value)

    def pass_once(self, trigger: str) -> PassReport:
        """One pass, in two short write transactions:

        1. lease, settle what exited, recover, plan what is due, claim and commit the
           dispatch decisions;
        2. (after asking the runtime to start each claimed attempt) record the starts and the
           pass itself.

        A pass that leaves nothing to start, cancel or deliver (one that only settles what
        ended, say) records itself in the first transaction: one commit instead of two.
        """
        clock_start = self.clock.monotonic()
        if trigger == WakeReason.SYSTEM_RESUMED.value:
            self.awake.take_delay()  # released for the sleep that has now ended
        report = PassReport(trigger, self.clock.now_utc(), scheduled_for=self.deadline)
        try:
            work = self._decide(report, clock_start)
            if not work.recorded:
                self._act_and_record(report, work, clock_start)
        except Fenced as error:
            self._stand_down(report, str(error))
        except StoreEnvironmentError as error:
            report.error_class, report.error = "store_" + error.kind, str(error)
            report.deadline = report.started_at + self.limits.retry_after_store_error
            log.warning("pass failed, retrying later: %s", error)
            self._record_failed_pass(report, clock_start)
        if self.lease is not None:
            self._maybe_sweep(report)
        self.deadline = report.deadline
        self.last_report = report
        log.debug(
            "pass %s: planned %s, claimed %s, dispatched %s, settled %s, recovered %s",
            trigger, report.planned, report.claimed, report.dispatched, report.settled,
            report.recovered,
        )  # fmt: skip
        if trigger == WakeReason.SYSTEM_SLEEPING.value:
            self.awake.release_delay()  # the sleep and the runs in flight are on record
        if self.listener is not None:
            self.listener(report)  # e.g. the desktop bridge: it must only queue, never block
        self._mind_the_lock()
        return report

    def _act_and_record(self, report: PassReport, work: _Work, clock_start: float) -> None:
        """Between the transactions: start, cancel, deliver; then transaction 2."""
        # Starts not yet on record stay in memory until a record transaction commits:
        # a failed one must not leave an attempt "dispatching" until the next restart.
        self._unrecorded += [(launch, self._start(launch)) for launch in work.launches]
        sent = [attempt for attempt in work.cancels if self.runtime.cancel(attempt)]
        delivered = [(job, receipts.perform(job, report.started_at)) for job in work.jobs]
        self._record(report, self._unrecorded, sent, delivered, clock_start)
        self._unrecorded = []

    def _maybe_sweep(self, report: PassReport) -> None:
        """Retention, in small transactions between passes; never inside one (§11)."""
        if self.sweeper.maybe_sweep(self.store, report.started_at, report.deadline) is not None:
            self._prune_audit()
        upcoming = self.sweeper.next_due(report.started_at)
        if report.deadline is None or report.deadline > upcoming:
            report.deadline = upcoming

    def _prune_audit(self) -> None:
        """The audit log keeps its newest entries and a checkpoint for the rest; a broken
        chain is never pruned (that would erase the evidence) — doctor reports it."""
        try:
            with self.store.write() as conn:
                audit.prune(conn, keep=self.limits.audit_keep)
        except (StoreEnvironmentError, audit.AuditLogBroken) as error:
            log.warning("the audit log was not pruned: %s", error)

    def _mind_the_lock(self) -> None:
        """Leader: hold the liveness lock. Standby: wait on it, to take over at once."""
        if self.lease is not None:
            self.leader_lock.hold()
        else:
            self.leader_lock.release()
            self.leader_lock.watch(self.wake)

    def shutdown(self) -> None:
        """Drain for a bounded time, settle what ended, record what was left running."""
        self.runtime.drain(self.limits.drain_timeout)
        if self.lease is not None:
            self.pass_once(SHUTDOWN)
        left = self.runtime.active()
        with self.store.write() as conn:
            now = self.clock.now_utc()
            events.record(conn, now, EventKind.SHUTDOWN, left_running=left)
            lease.release(conn, self.holder, now)
        self.lease = None
        self.awake.release_all()  # a run left running is held again by whoever adopts it
        self.leader_lock.release()

    # -- transaction 1: decide --------------------------------------------------------------
    def _decide(self, report: PassReport, clock_start: float) -> _Work:
        now = report.started_at
        cause = self.drift.cause(report.trigger, now)
        self._unsettled += self.runtime.collect()
        if self._unsettled:
            failpoints.hit("exit.observed")
        with self.store.write() as conn:
            if not self._take_lease(conn, report, now):
                return _Work()
            stamp = self._stamp()
            self.drift.record(conn, now, report.trigger)
            report.settled += sum(settle_attempt(conn, e, stamp) for e in self._unsettled)
            report.recovered += self._recover(conn, stamp)
            report.planned += self._plan(conn, now, cause, stamp, report)  # unless paused
            failpoints.hit("plan.written")
            # A shutdown starts nothing: what it claimed would only be left for the next start.
            launches = [] if report.trigger == SHUTDOWN else self._claim(conn, now, stamp, report)
            failpoints.hit("claim.written" if not launches else "dispatch.decided")
            if report.trigger == WakeReason.SYSTEM_SLEEPING.value:
                events.record(conn, now, EventKind.SLEEPING, in_flight=in_flight(conn))
            work = self._follow_up(conn, now, stamp.generation, report, launches)
            if not (work.launches or work.cancels or work.jobs or self._unrecorded):
                report.duration_ms = (self.clock.monotonic() - clock_start) * 1000
                insert_pass(conn, self.holder.token, report)
                work = replace(work, recorded=True)  # nothing is left for a second transaction
        self._unsettled = []  # committed: a failed transaction keeps them for the next pass
        self.awake.keep(work.awake)  # before any command starts, and once its run settled
        failpoints.hit("settle.committed" if report.settled else "decide.committed")
        return work

    def _take_lease(self, conn: apsw.Connection, report: PassReport, now: datetime) -> bool:
        previous = self.lease.generation if self.lease else None
        self.lease = lease.acquire(conn, self.holder, now)
        if self.lease is None:
            held = lease.current(conn)
            report.role = "standby"
            report.deadline = held.expires_at if held else now
            return False
        report.generation = self.lease.generation
        if previous != self.lease.generation:
            events.record(
                conn, now, EventKind.LEADER_CHANGED,
                generation=self.lease.generation, holder=self.lease.fingerprint(),
            )  # fmt: skip
        return True

    def _stamp(self) -> Stamp:
        assert self.lease is not None
        return Stamp(self.clock.now_utc(), self.lease.generation)

    def _recover(self, conn: apsw.Connection, stamp: Stamp) -> int:
        """Once per generation: settle what earlier leaders left unfinished."""
        if self._recovered_generation == stamp.generation:
            return 0
        unfinished = recovery.unfinished(conn, stamp.generation)
        for attempt in unfinished:
            recovery.recover(conn, attempt, self.runtime, stamp)
        review(conn, stamp)  # routines that stopped or started to load with this tzdb
        self._recovered_generation = stamp.generation
        return len(unfinished)

    def _plan(
        self, conn: apsw.Connection, now: datetime, cause: MissedCause, stamp: Stamp,
        report: PassReport,
    ) -> int:  # fmt: skip
        planned = 0
        for routine in routines.due(conn, now, self.limits.plan_batch):
            planned += plan_routine(conn, routine, now, cause, stamp, self.revisions)
            report.touched.add(routine.id)
        return planned

    def _claim(
        self, conn: apsw.Connection, now: datetime, stamp: Stamp, report: PassReport
    ) -> list[Launch]:
        waiting, active, most = occurrences.waiting(conn, now, self.limits.claim_batch)
        if waiting is None:
            return []
        capacity = settings.max_active(most, self.limits.max_active) - active
        launches: list[Launch] = []
        gate = Gate(self.host.state)
        for item in waiting:
            if len(launches) >= capacity:
                break
            launch = claim_one(conn, item, stamp, self.revisions, gate)  # with crash point 4
            if launch is not None:
                launches.append(launch)
            report.touched.add(item.routine_id)
        report.claimed += len(launches)
        self._condition_wait = gate.wait_ends
        return launches

    def _follow_up(
        self, conn: apsw.Connection, now: datetime, generation: int, report: PassReport,
        launches: list[Launch],
    ) -> _Work:  # fmt: skip
        """What is left to do outside the transaction, and when to wake next."""
        ahead = agenda.read(conn, now, generation)
        if ahead.next_overrun is not None and ahead.next_overrun <= now:
            overrun.raise_due(conn, now)  # once: each is marked as raised
            ahead = replace(ahead, next_overrun=overrun.earliest(conn))
        cancels: list[str] = []
        jobs: list[receipts.Job] = []
        if ahead.cancels_requested:
            cancels = cancellation.to_send(conn, generation, self._cancels_sent)
        if ahead.deliveries_due:
            jobs = receipts.due(conn, self.store.data_dir, now, self.limits.deliveries)
        report.deadline = self._next_deadline(report, ahead, len(jobs))
        wanted = keep_awake_runs(conn) if ahead.keep_awake else {}
        return _Work(launches, cancels, jobs, awake=wanted)

    def _next_deadline(
        self, report: PassReport, ahead: agenda.Agenda, deliveries: int
    ) -> datetime | None:
        """A full batch of plans, claims or deliveries means more may wait now: go again at
        once (the agenda's next delivery is only a later retry, so without this the rest of
        the deliveries waited for whatever woke the scheduler next)."""
        limits = self.limits
        if (report.planned >= limits.plan_batch or report.claimed >= limits.claim_batch
                or deliveries >= limits.deliveries):  # fmt: skip
            return report.started_at
        due = None if ahead.paused else ahead.next_due
        wait, self._condition_wait = self._condition_wait, None
        return _earliest(ahead.next_retry, ahead.next_delivery, due, ahead.next_overrun, wait)

    # -- between the transactions: start commands, holding no transaction ------------------
    def _start(self, launch: Launch) -> Started | LaunchError:
        failpoints.hit("runtime.before_start")
        try:
            started = self.runtime.start(launch)
        except LaunchError as error:
            return error
        failpoints.hit("runtime.after_start")
        return started

    # -- transaction 2: record --------------------------------------------------------------
    def _record(
        self,
        report: PassReport,
        started: list[tuple[Launch, Started | LaunchError]],
        sent: list[str],
        delivered: list[tuple[receipts.Job, receipts.Outcome]],
        clock_start: float,
    ) -> None:
        if self.lease is None:
            self._record_failed_pass(report, clock_start)
            return
        stamp = self._stamp()
        with self.store.write() as conn:
            lease.check_fence(conn, stamp.generation)
            later = [_record_start(conn, launch, outcome, stamp) for launch, outcome in started]
            report.dispatched += sum(isinstance(outcome, Started) for _, outcome in started)
            cancellation.record_sent(conn, sent, stamp)
            for job, result in delivered:
                receipts.record(conn, job, result, stamp)
            if any(later) or any(isinstance(result, DeliveryError) for _, result in delivered):
                report.deadline = _earliest(report.deadline, *self._retries(conn, stamp.now))
            report.duration_ms = (self.clock.monotonic() - clock_start) * 1000
            insert_pass(conn, self.holder.token, report)
        self._cancels_sent.update(sent)
        if delivered:
            failpoints.hit("receipt.committed")

    @staticmethod
    def _retries(conn: apsw.Connection, now: datetime) -> tuple[datetime | None, ...]:
        """Retries and deliveries this very transaction scheduled (a failed start, a failed
        delivery, the output of a run that ended before its start was on record) need their
        own deadline: the one chosen before they existed is too late."""
        return occurrences.earliest_retry(conn, now), receipts.next_due(conn, now)

    def _record_failed_pass(self, report: PassReport, clock_start: float) -> None:
        report.duration_ms = (self.clock.monotonic() - clock_start) * 1000
        try:
            with self.store.write() as conn:
                insert_pass(conn, self.holder.token, report)
        except StoreEnvironmentError as error:  # the pass record is best-effort
            log.warning("could not record the pass: %s", error)

    def _stand_down(self, report: PassReport, why: str) -> None:
        log.warning("standing down: %s", why)
        self.lease = None
        report.role, report.error_class, report.error = "standby", "fenced", why
        with self.store.read() as conn:
            held = lease.current(conn)
        report.deadline = held.expires_at if held else report.started_at


def _earliest(*instants: datetime | None) -> datetime | None:
    return min((instant for instant in instants if instant is not None), default=None)


@dataclass(frozen=True)
class _Work:
    """What a pass decided to do outside its transaction."""

    launches: list[Launch] = field(default_factory=list)
    cancels: list[str] = field(default_factory=list)
    jobs: list[receipts.Job] = field(default_factory=list)
    recorded: bool = False  # the pass is already on record: no second transaction
    awake: dict[str, str] = field(default_factory=dict)  # runs that keep the machine awake


def _record_start(
    conn: apsw.Connection, launch: Launch, outcome: Started | LaunchError, stamp: Stamp
) -> bool:
    """Record one start; True when that scheduled something for later: a failed start's
    settlement (it may retry the attempt), or the delivery of a run that had already ended."""
    if isinstance(outcome, LaunchError):
        exit_ = Exit(launch.attempt_id, stamp.now, failure_class=outcome.failure_class,
                     message=str(outcome))  # fmt: skip
        settle_attempt(conn, exit_, stamp)
        return True
    return occurrences.mark_running(conn, launch, outcome, stamp)
