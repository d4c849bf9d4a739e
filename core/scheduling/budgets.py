"""Budgets: how many runs, and how much run time, a routine may use per day (DESIGN §14).

A day is a calendar day in the routine's own zone. A run counts on the day its first
attempt was claimed (a retry is the same run); run time is what its attempts spent running
inside the day (a live one up to now). A scheduled moment whose claim finds the budget used
up is skipped with reason ``budget_exhausted`` and the budget's state as its inputs; a
person's "run now" is allowed, counted like any run, and marked with the same state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any

import apsw

from coven_core.errors import ZoneError
from coven_core.model import RevisionSpec
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.query import scalar
from coven_core.tz import tzdb

_DAY = timedelta(days=1)


@dataclass(frozen=True)
class BudgetState:
    """A routine's use of its budget on one local day, at a claim."""

    day: date
    runs: int  # runs whose first attempt was claimed this day (before this claim)
    runtime: timedelta  # time its attempts spent running this day
    max_runs: int | None
    max_runtime: timedelta | None
    zone: str = "UTC"  # whose calendar day it is

    @property
    def exhausted(self) -> bool:
        over_runs = self.max_runs is not None and self.runs >= self.max_runs
        over_time = self.max_runtime is not None and self.runtime >= self.max_runtime
        return over_runs or over_time

    def inputs(self) -> dict[str, Any]:
        """The state as the decision's stored inputs."""
        found: dict[str, Any] = {"day": self.day.isoformat(), "zone": self.zone, "runs": self.runs}
        if self.max_runs is not None:
            found["max_runs"] = self.max_runs
        if self.max_runtime is not None:
            found["runtime_seconds"] = round(self.runtime.total_seconds(), 3)
            found["max_runtime_seconds"] = self.max_runtime.total_seconds()
        return found


def has_budget(spec: RevisionSpec) -> bool:
    return spec.max_runs_per_day is not None or spec.max_runtime_per_day is not None


def day_bounds(spec: RevisionSpec, now: datetime) -> tuple[date, datetime, datetime]:
    """The local day holding ``now`` in the routine's zone, and its UTC bounds. A zone the
    tz database lost since the moment was planned (DESIGN §6) must not stop the claim: the
    day is then the UTC day, and the inputs say so."""
    zone = _zone(spec.timezone)
    day = now.astimezone(zone).date()
    start = datetime.combine(day, time(), zone)
    end = datetime.combine(day + _DAY, time(), zone)
    return day, start.astimezone(now.tzinfo), end.astimezone(now.tzinfo)


def _zone(key: str) -> tzinfo:
    try:
        return tzdb.zone(key)
    except ZoneError:
        return UTC


def state(
    conn: apsw.Connection, routine_id: str, spec: RevisionSpec, now: datetime
) -> BudgetState | None:
    """The budget's state now, or None when the revision sets no budget."""
    if not has_budget(spec):
        return None
    day, start, end = day_bounds(spec, now)
    return BudgetState(
        day, _runs(conn, routine_id, start, end), _runtime(conn, routine_id, start, end, now),
        spec.max_runs_per_day, spec.max_runtime_per_day, _zone_name(spec),
    )  # fmt: skip


def _zone_name(spec: RevisionSpec) -> str:
    return spec.timezone if _zone(spec.timezone) is not UTC else "UTC"


def _runs(conn: apsw.Connection, routine_id: str, start: datetime, end: datetime) -> int:
    return int(
        scalar(
            conn,
            "SELECT count(*) FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
            "WHERE o.routine_id = ? AND a.number = 1 AND a.claimed_at >= ? AND a.claimed_at < ?",
            (routine_id, instant_text(start), instant_text(end)),
        )
    )


def _runtime(
    conn: apsw.Connection, routine_id: str, start: datetime, end: datetime, now: datetime
) -> timedelta:
    """Running time inside ``[start, end)``: from each attempt's start (its claim if it never
    recorded one) to its exit (now while it runs; its settlement if no exit was seen)."""
    rows = conn.execute(
        "SELECT coalesce(a.started_at, a.claimed_at), coalesce(a.exited_at, a.settled_at) "
        "FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id WHERE o.routine_id = ? "
        "AND a.claimed_at < ? AND (coalesce(a.exited_at, a.settled_at) IS NULL "
        "OR coalesce(a.exited_at, a.settled_at) > ?)",
        (routine_id, instant_text(end), instant_text(start)),
    )
    used = timedelta(0)
    for began, ended in rows:
        low = max(instant_from(began), start)
        high = min(now if ended is None else instant_from(ended), end)
        used += max(high - low, timedelta(0))
    return used
