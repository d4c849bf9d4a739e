"""Scheduler passes: what each did, recorded so the timeline and Diagnostics can show it (§3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import apsw

from coven_core.store.codec import instant_text, maybe_instant_text


@dataclass
class PassReport:
    trigger: str  # "startup", "shutdown" or the WakeReason that started the pass
    started_at: datetime
    scheduled_for: datetime | None = None  # the deadline it woke for, if any
    role: str = "leader"
    generation: int | None = None
    planned: int = 0
    claimed: int = 0
    dispatched: int = 0
    recovered: int = 0
    settled: int = 0
    error_class: str | None = None
    error: str | None = None
    deadline: datetime | None = None
    duration_ms: float = 0.0
    touched: set[str] = field(default_factory=set)  # routine ids whose rows changed


def insert_pass(conn: apsw.Connection, holder: str, report: PassReport) -> None:
    conn.execute(
        "INSERT INTO passes (holder, generation, role, scheduled_at, started_at, duration_ms, "
        "wake_reason, planned, claimed, dispatched, recovered, settled, error_class, error) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            holder, report.generation, report.role, maybe_instant_text(report.scheduled_for),
            instant_text(report.started_at),
            report.duration_ms, report.trigger, report.planned, report.claimed,
            report.dispatched, report.recovered, report.settled, report.error_class, report.error,
        ),
    )  # fmt: skip


def last_pass_at(conn: apsw.Connection) -> str | None:
    row = conn.execute("SELECT max(started_at) FROM passes").fetchone()
    return None if row is None else row[0]
