"""The lifecycle's vocabulary (DESIGN §5): routines, revisions, occurrences, attempts.

The same words mean the same things in the store, the CLI, the GUI and the docs.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta


class RoutineState(enum.StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    QUARANTINED = "quarantined"
    DELETED = "deleted"


class MisfirePolicy(enum.StrEnum):
    """What to do with moments whose time passed while nothing could run them (§3)."""

    LATEST_ONLY = "latest_only"  # run the most recent, if within grace; coalesce the rest
    SKIP_MISSED = "skip_missed"  # run none; coalesce all


class OverlapPolicy(enum.StrEnum):
    """What to do with a moment that comes due while the routine's previous run is active."""

    SKIP = "skip"  # skip it, reason overlap
    QUEUE_ONE = "queue_one"  # let one wait for the active run; skip any more


class OccurrenceKind(enum.StrEnum):
    SCHEDULED = "scheduled"
    MANUAL = "manual"
    COALESCED = "coalesced"  # one row for a whole window of missed moments
    TRIGGERED = "triggered"  # planned by an upstream routine's outcome (a chain, §14)


class OccurrenceState(enum.StrEnum):
    PLANNED = "planned"
    CLAIMED = "claimed"
    RUNNING = "running"
    SETTLED = "settled"


class Disposition(enum.StrEnum):
    """How an occurrence ended. Only RECOVERY_REQUIRED is not terminal."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"
    SKIPPED = "skipped"
    RECOVERY_REQUIRED = "recovery_required"
    RECONCILED = "reconciled"
    SHADOWED = "shadowed"  # a trial routine's moment: decided as if live, never started (§14)


#: A shadowed moment's decision code when it would have run (otherwise the SkipReason it
#: would have been skipped with).
WOULD_RUN = "would_run"


class SkipReason(enum.StrEnum):
    NONEXISTENT_LOCAL_TIME = "nonexistent_local_time"
    MISSED = "missed"
    OVERLAP = "overlap"
    PAUSED = "paused"
    QUARANTINED = "quarantined"
    DELETED = "deleted"
    ROUTINE_BROKEN = "routine_broken"  # its revision could not be loaded (§6, fault domains)
    EXCLUDED_DATE = "excluded_date"  # its local date is one of the revision's --except dates
    BUDGET_EXHAUSTED = "budget_exhausted"  # the day's runs or run time were used up (§14)
    COOLDOWN = "cooldown"  # it came due while the routine rested after failures (§14)
    GROUP_BUSY = "group_busy"  # another routine of its group was running (§14)
    CONDITION_UNMET = "condition_unmet"  # on battery or offline through its grace (§14)


class MissedCause(enum.StrEnum):
    """Why a window of moments passed with nothing run (§3)."""

    ASLEEP = "asleep"
    APP_NOT_RUNNING = "app_not_running"
    CLOCK_JUMP = "clock_jump"
    PAUSED = "paused"
    QUARANTINED = "quarantined"
    LATE = "scheduler_late"  # the scheduler itself fell behind (overload, a stalled disk)
    ROUTINE_BROKEN = "routine_broken"  # the moments could not even be computed


class AttemptState(enum.StrEnum):
    CLAIMED = "claimed"
    DISPATCHING = "dispatching"
    RUNNING = "running"
    EXITED = "exited"
    SETTLED = "settled"


class FailureClass(enum.StrEnum):
    """Every failure is classified before any retry is considered (§6)."""

    VALIDATION = "validation"
    REFUSED = "refused"
    STORE_TRANSIENT = "store_transient"
    RUNTIME_UNAVAILABLE = "runtime_unavailable"
    ACTION_FAILED = "action_failed"
    AMBIGUOUS = "ambiguous"
    DELIVERY_FAILED = "delivery_failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"


@dataclass(frozen=True)
class RevisionSpec:
    """Everything a person decides about a routine; one immutable revision of it."""

    schedule: str
    timezone: str
    argv: tuple[str, ...]
    zone_source: str = "explicit"  # or where 'local' was resolved from
    misfire: MisfirePolicy = MisfirePolicy.LATEST_ONLY
    grace: timedelta | None = None  # None: the latest missed moment always runs once
    overlap: OverlapPolicy = OverlapPolicy.SKIP
    timeout: timedelta | None = None
    retries: int = 0
    idempotent: bool = False
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    shell: bool = False  # run argv[0] through /bin/sh -c (only when the person asks)
    stop_grace: timedelta = timedelta(seconds=5)  # SIGTERM → SIGKILL on cancel or timeout
    quarantine_after: int = 3  # consecutive failed occurrences before quarantine
    except_dates: tuple[date, ...] = ()  # local dates whose moments are skipped (EXDATE, §14)
    shadow: bool = False  # a trial: every moment is decided, none is started (§14)
    max_runs_per_day: int | None = None  # runs a local day may start (None: no budget)
    max_runtime_per_day: timedelta | None = None  # run time a local day may use
    cooldown: timedelta | None = None  # rest after a failed occurrence, doubling per failure
    cooldown_max: timedelta | None = None  # the longest rest (None: a day)
    group: str | None = None  # at most one routine of a group runs at a time (§14)
    after: str | None = None  # the upstream routine whose outcome triggers a run (§14)
    after_outcome: str = "succeeded"  # or "finished": any end of the upstream's run
    on_ac_power: bool = False  # a moment waits (within its grace) for mains power (§14)
    when_online: bool = False  # a moment waits (within its grace) for the network (§14)
    keep_awake: bool = False  # the machine must not sleep while a run is active (§14)


@dataclass(frozen=True)
class Revision:
    """A stored revision: the spec plus what planning bound it to."""

    routine_id: str
    number: int
    spec: RevisionSpec
    anchor: datetime  # aware UTC: RRULE DTSTART / interval origin
    tzdb_version: str
    dst_policy: str
    effective_from: datetime  # in force from here until a later revision is (planning.segments)
    created_at: datetime


@dataclass(frozen=True)
class Routine:
    id: str
    name: str
    state: RoutineState
    state_reason: str | None
    revision: int
    planned_through: datetime  # every moment before this instant has been decided
    next_due: datetime | None
    created_at: datetime
