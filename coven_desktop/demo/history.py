"""A realistic demo store, made by the real engine under virtual time (no Qt here).

Four weeks of a person's routines, in Europe/Berlin, America/New_York and UTC, from Monday
2 March 2026 to Monday 30 March 2026 14:30 UTC — across New York's spring-forward (8 March)
and Berlin's (29 March): daily successes, a failure, a timed-out run, two nonexistent local
times skipped, a weekend asleep (one coalesced missed window), a backward clock step, a trip
to New York (time-zone changes), a manual run, a routine paused by hand, one on trial (its
moments decided, never started), one quarantined by the circuit breaker, and a run whose
runner died mid-command — ``recovery_required``, with its journal — after which a second
scheduler took over.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from coven_core.clock import VirtualClock, WakeSignal
from coven_core.model import RevisionSpec
from coven_core.operations.host import record_zone_change
from coven_core.operator import Operator
from coven_core.runtime.base import Launch
from coven_core.scheduling.lease import LEASE_TTL
from coven_core.scheduling.scheduler import Scheduler
from coven_core.store.store import Store
from coven_desktop.demo.runtime import DemoRuntime, Plan, private_root

START = datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
NOW = datetime(2026, 3, 30, 14, 30, tzinfo=UTC)
_MIN = timedelta(minutes=1)

PlanFor = Callable[[datetime], Plan]


@dataclass
class Node:
    """One scheduler incarnation on the demo store."""

    store: Store
    scheduler: Scheduler
    runtime: DemoRuntime
    wake: WakeSignal
    operator: Operator

    def close(self) -> None:
        self.store.close()


@dataclass
class Demo:
    data_dir: Path
    clock: VirtualClock
    plans: dict[str, PlanFor] = field(default_factory=dict)  # routine id -> its plans

    def boot(self) -> Node:
        store = Store.open(self.data_dir, self.clock.now_utc())
        wake = WakeSignal()
        runtime = DemoRuntime(self.clock, wake, private_root(self.data_dir), self.plan_for)
        scheduler = Scheduler(store, self.clock, runtime, wake)
        return Node(store, scheduler, runtime, wake, Operator(store, self.clock, wake.set))

    def plan_for(self, launch: Launch) -> Plan:
        plans = self.plans.get(launch.routine_id)
        return plans(self.clock.now_utc()) if plans else Plan()

    def add(self, node: Node, name: str, spec: RevisionSpec, plans: PlanFor) -> None:
        self.plans[node.operator.add_routine(name, spec)] = plans


def drive(node: Node, clock: VirtualClock, until: datetime) -> None:
    """The scheduler's loop under virtual time: a pass at every deadline, wake and exit."""
    scheduler, runtime, wake = node.scheduler, node.runtime, node.wake
    if scheduler.last_report is None:
        scheduler.pass_once("startup")
    while True:
        runtime.end_due()
        reason = wake.take()
        if reason is not None:
            scheduler.pass_once(reason.value)
            continue
        upcoming = [t for t in (scheduler.deadline, runtime.next_end()) if t is not None]
        if not upcoming or min(upcoming) > until:
            clock.advance_to(max(until, clock.now_utc()))
            return
        clock.advance_to(max(min(upcoming), clock.now_utc()))
        runtime.end_due()
        if not wake.is_set():
            scheduler.pass_once("deadline")


def build(data_dir: Path) -> VirtualClock:
    """Make the demo store in ``data_dir``; returns the clock, standing at :data:`NOW`."""
    clock = VirtualClock(START, autojump=False)
    demo = Demo(data_dir, clock)
    first = demo.boot()
    _routines(demo, first)
    _four_weeks(demo, first)
    second = _the_runner_dies(demo, first)
    drive(second, clock, NOW)
    second.scheduler.shutdown()  # the demo's app quit; the desktop takes over from here
    second.close()
    return clock


def _spec(schedule: str, zone: str, *argv: str, **options: object) -> RevisionSpec:
    return RevisionSpec(schedule=schedule, timezone=zone, argv=argv, **options)  # type: ignore[arg-type]


def _routines(demo: Demo, node: Node) -> None:
    for name, spec, plans in ROUTINES:
        demo.add(node, name, spec, plans)


def _steady(takes: timedelta, stdout: str = "") -> PlanFor:
    plan = Plan(takes, stdout=stdout)
    return lambda _at: plan


def _photo_plans(at: datetime) -> Plan:
    if at.date() == datetime(2026, 3, 12).date():
        return Plan(
            timedelta(minutes=3),
            exit_code=2,
            stdout="importing 212 photos\n",
            stderr="error: /media/camera/DCIM/0457.JPG: No space left on device\n",
        )
    if at.date() == datetime(2026, 3, 18).date():
        return Plan(timedelta(minutes=45), stdout="importing 1,830 photos\n…\n")
    return Plan(timedelta(minutes=3), stdout="imported 36 photos\n")


def _agent_plans(at: datetime) -> Plan:
    if at >= datetime(2026, 3, 30, tzinfo=UTC):
        return Plan(hang=True, stdout="fetching 14 sources\nsummarising 9 of 14…\n")
    return Plan(timedelta(minutes=6), stdout="digest sent to ada@example.org\n")


#: The person's routines, as they were created on the first day.
ROUTINES: tuple[tuple[str, RevisionSpec, PlanFor], ...] = (
    ("backup", _spec("30 2 * * *", "Europe/Berlin", "/usr/bin/rsync", "-a", "/home/ada/Documents",
                     "/mnt/backup", timeout=timedelta(hours=1)),
     _steady(timedelta(minutes=4), "sent 1,204 files (312 MB)\ntotal size is 48 GB\n")),
    ("nightly-report", _spec("30 2 * * *", "America/New_York", "/usr/bin/python3", "report.py",
                             "--daily"),
     _steady(_MIN, "report written: reports/daily.html\n")),
    ("sync-notes", _spec("0 */2 * * *", "UTC", "/usr/bin/git", "-C", "/home/ada/notes", "pull"),
     _steady(timedelta(seconds=20), "Already up to date.\n")),
    ("photo-import", _spec("0 20 * * *", "Europe/Berlin", "/usr/local/bin/import-photos",
                           "/media/camera", timeout=timedelta(minutes=20)), _photo_plans),
    ("agent-report", _spec("0 9 * * 1-5", "America/New_York", "/usr/local/bin/agent", "run",
                           "weekly-digest"), _agent_plans),
    ("weekly-cleanup", _spec("0 3 * * 0", "Europe/Berlin", "/usr/bin/find", "/home/ada/tmp",
                             "-mtime", "+30", "-delete"), _steady(_MIN)),
)  # fmt: skip


def _four_weeks(demo: Demo, node: Node) -> None:
    clock = demo.clock
    drive(node, clock, datetime(2026, 3, 20, 22, 0, tzinfo=UTC))
    clock.suspend(timedelta(days=2, hours=8, minutes=30), notify=False)  # a weekend asleep
    node.scheduler.pass_once("system_resumed")
    drive(node, clock, datetime(2026, 3, 24, 10, 0, tzinfo=UTC))
    node.operator.run_now("backup", key="before-the-upgrade")
    drive(node, clock, datetime(2026, 3, 25, 7, 0, tzinfo=UTC))
    record_zone_change(node.store, clock.now_utc(), "Europe/Berlin", "America/New_York")
    drive(node, clock, datetime(2026, 3, 26, 16, 0, tzinfo=UTC))
    clock.jump_wall(timedelta(seconds=-95), notify=False)  # the clock was corrected by NTP
    node.scheduler.pass_once("clock_jumped")
    drive(node, clock, datetime(2026, 3, 27, 18, 0, tzinfo=UTC))
    record_zone_change(node.store, clock.now_utc(), "America/New_York", "Europe/Berlin")
    drive(node, clock, datetime(2026, 3, 28, 9, 0, tzinfo=UTC))
    node.operator.pause("weekly-cleanup", "keeping old downloads until the move is done")
    cloud = _spec("0 */3 * * *", "Europe/Berlin", "/usr/bin/rclone", "sync", "/home/ada/Photos",
                  "cloud:photos", shadow=True)  # fmt: skip
    demo.add(node, "cloud-sync", cloud, _steady(timedelta(minutes=2)))  # on trial: never starts
    drive(node, clock, datetime(2026, 3, 30, 11, 50, tzinfo=UTC))
    fetch = _spec("*/15 * * * *", "UTC", "/usr/bin/fetchmail", "--keep")
    demo.add(
        node,
        "fetch-mail",
        fetch,
        lambda _at: Plan(
            timedelta(seconds=8),
            exit_code=1,
            stderr="fetchmail: Authorization failure on ada@mail.example.org\n",
        ),
    )
    drive(node, clock, datetime(2026, 3, 30, 13, 5, tzinfo=UTC))


def _the_runner_dies(demo: Demo, node: Node) -> Node:
    """The app and its runner die while agent-report runs; a new scheduler takes over once
    the lease has expired and finds a journal that stops after the spawn."""
    node.close()
    demo.clock.advance(LEASE_TTL + timedelta(seconds=30))
    return demo.boot()
