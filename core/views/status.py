"""``coven status``: the scheduler at a glance, with the figures §11 says are reported.

Leader (holder fingerprint, generation, alive), the last pass and its duration, the next
deadline, queue depth, the oldest eligible occurrence's age, planning lag, start lag (p50/p99
over the last hour), the active count, the store's size and counts by state.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, NamedTuple

import apsw

from coven_core.notation.utc import utc_text
from coven_core.scheduling import lease
from coven_core.store.codec import any_instant_from, instant_from, instant_text
from coven_core.store.query import scalar
from coven_core.store.store import Store
from coven_core.views.glance import earliest_due, scheduling_paused

_HOUR = timedelta(hours=1)


class Lags(NamedTuple):
    """Seconds; None where there is nothing to measure."""

    oldest_eligible_age: float | None
    planning_lag: float | None
    start_lag_p50: float | None
    start_lag_p99: float | None
    start_lag_samples: int

    def to_json(self) -> dict[str, Any]:
        return {
            "oldest_eligible_age_seconds": self.oldest_eligible_age,
            "planning_lag_seconds": self.planning_lag,
            "start_lag_p50_seconds": self.start_lag_p50,
            "start_lag_p99_seconds": self.start_lag_p99,
            "start_lag_samples": self.start_lag_samples,
        }


class Status(NamedTuple):
    leader: lease.Lease | None
    leader_alive: bool
    paused_all: bool
    last_pass: dict[str, Any] | None
    next_deadline: datetime | None
    queue_depth: int
    active: int
    lags: Lags
    store_bytes: int
    counts: dict[str, int]
    broken: dict[str, str]  # routine name → why it plans nothing and how to mend it

    def to_json(self) -> dict[str, Any]:
        return {
            "leader": self._leader_json(),
            "scheduling_paused": self.paused_all,
            "last_pass": self.last_pass,
            "next_deadline": _iso(self.next_deadline),
            "queue_depth": self.queue_depth,
            "active": self.active,
            **self.lags.to_json(),
            "store_bytes": self.store_bytes,
            "counts": self.counts,
            "broken_routines": [
                {"name": name, "reason": reason} for name, reason in self.broken.items()
            ],
        }

    def _leader_json(self) -> dict[str, Any] | None:
        held = self.leader
        if held is None:
            return None
        return {
            "holder": held.fingerprint(),
            "generation": held.generation,
            "expires_at": _iso(held.expires_at),
            "alive": self.leader_alive,
        }


def _iso(instant: datetime | None) -> str | None:
    return None if instant is None else utc_text(instant)


def status(store: Store, now: datetime) -> Status:
    with store.read() as conn:
        held = lease.current(conn)
        return Status(
            held, lease.is_alive(held, now), scheduling_paused(conn), _last_pass(conn),
            earliest_due(conn),
            _count(conn, "SELECT count(*) FROM occurrences WHERE state = 'planned'"),
            _count(conn, "SELECT count(*) FROM occurrences WHERE state IN ('claimed', 'running')"),
            lags(conn, now), _store_bytes(store), _counts(conn), _broken(conn),
        )  # fmt: skip


def _broken(conn: apsw.Connection) -> dict[str, str]:
    """Broken routines by name. Only active routines with nothing due can be (see
    ``routines.broken``): with none, a glance loads neither the model nor the tz binding."""
    sql = "SELECT count(*) FROM routines WHERE state = 'active' AND next_due IS NULL"
    if not _count(conn, sql):
        return {}
    from coven_core.scheduling import routines

    return {routine.name: why.reason(routine.name) for routine, why in routines.broken(conn)}


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    import statistics  # only with starts to measure: it pulls in fractions, decimal, random

    return statistics.median(values)


def lags(conn: apsw.Connection, now: datetime) -> Lags:
    starts = _start_lags(conn, now - _HOUR)
    return Lags(
        _age(conn, now, "SELECT min(scheduled_utc) FROM occurrences WHERE state = 'planned' "
             "AND (not_before IS NULL OR not_before <= ?1) AND scheduled_utc <= ?1"),
        _age(conn, now, "SELECT min(next_due) FROM routines WHERE state = 'active' "
             "AND next_due <= ?1"),
        _median(starts),
        _percentile(starts, 0.99),
        len(starts),
    )  # fmt: skip


def _age(conn: apsw.Connection, now: datetime, sql: str) -> float | None:
    oldest = scalar(conn, sql, (instant_text(now),))
    return None if oldest is None else (now - instant_from(oldest)).total_seconds()


#: Why a moment is caught up late that is not the scheduler's doing: nothing could run it then
#: (``MissedCause`` values; the model stays off ``coven status``'s path: tests/core/cli).
NOT_THE_SCHEDULERS = ("asleep", "app_not_running", "clock_jump")
_FROM = (  # where a start's lag is counted from
    f"CASE WHEN o.cause IN {NOT_THE_SCHEDULERS} THEN max(o.scheduled_utc, o.planned_at) "
    "ELSE o.scheduled_utc END"
)


def _start_lags(conn: apsw.Connection, since: datetime) -> list[float]:
    """Scheduled instant → start of the first attempt, for scheduled occurrences.

    A moment that came while the computer slept or the app was not running is counted from
    when that ended, the first instant anything could start it; so is one caught up after a
    clock jump, from when it was planned. Each was late for a reason its story tells, and
    counted from its instant one such start made the p99 read hours (or, for a moment a few
    seconds before the app started, 50 s on the Diagnostics page of an app just opened). One
    the scheduler itself was late for (``scheduler_late``) counts from its instant."""
    rows = [
        (instant_from(scheduled), instant_from(started))
        for scheduled, started in conn.execute(
            f"SELECT {_FROM}, a.started_at FROM attempts a JOIN occurrences o "
            "ON o.id = a.occurrence_id WHERE a.number = 1 AND o.kind = 'scheduled' "
            "AND a.started_at >= ?",
            (instant_text(since),),
        )
    ]
    if not rows:
        return []
    pauses = _pauses(conn, min(scheduled for scheduled, _ in rows))
    return sorted(
        (started - _after_pauses(scheduled, pauses)).total_seconds() for scheduled, started in rows
    )


def _pauses(conn: apsw.Connection, after: datetime) -> list[tuple[datetime, datetime]]:
    """The sleeps and the app's downtimes that ended after ``after``: (start, end). Each is
    recorded when it ends, so by its end (``events_intervals``). Read by SQLite's JSON: the
    json module stays off ``coven status``'s path (tests/core/cli)."""
    rows = conn.execute(
        "SELECT json_extract(data, '$.start'), json_extract(data, '$.end') FROM events "
        "WHERE kind IN ('slept', 'downtime') AND at >= ? AND json_valid(data)",
        (instant_text(after),),
    )
    found = []
    for start, end in rows:
        try:
            found.append((any_instant_from(start), any_instant_from(end)))
        except (TypeError, ValueError):  # a damaged row proves no pause
            continue
    return found


def _after_pauses(moment: datetime, pauses: list[tuple[datetime, datetime]]) -> datetime:
    """The first instant anything could start ``moment``: the end of a pause it fell in."""
    return max([moment, *(end for start, end in pauses if start <= moment <= end)])


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    return values[min(len(values) - 1, int(share * len(values)))]


def _last_pass(conn: apsw.Connection) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT started_at, duration_ms, role, wake_reason, planned, claimed, dispatched, "
        "recovered, settled, error_class FROM passes ORDER BY id DESC LIMIT 1"
    ).fetchone()
    if row is None:
        return None
    keys = ("started_at", "duration_ms", "role", "trigger", "planned", "claimed", "dispatched",
            "recovered", "settled", "error_class")  # fmt: skip
    found = dict(zip(keys, row, strict=True))
    found["started_at"] = instant_text(instant_from(found["started_at"]))  # as attempts' are
    found["duration_ms"] = round(found["duration_ms"], 2)
    return found


def _count(conn: apsw.Connection, sql: str) -> int:
    return int(scalar(conn, sql))


def _store_bytes(store: Store) -> int:
    files = [store.path, store.path.with_name(store.path.name + "-wal")]
    return sum(path.stat().st_size for path in files if path.exists())


def _counts(conn: apsw.Connection) -> dict[str, int]:
    counts = {
        f"routines_{state}": int(n)
        for state, n in conn.execute("SELECT state, count(*) FROM routines GROUP BY state")
    }
    for state, n in conn.execute(
        "SELECT coalesce(disposition, state), count(*) FROM occurrences GROUP BY 1"
    ):
        counts[f"occurrences_{state}"] = int(n)
    return counts
