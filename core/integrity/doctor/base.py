"""What every doctor check shares: findings, the context a check reads, how checks run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal

import apsw

from coven_core.model import OccurrenceState
from coven_core.scheduling.lease import Lease
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.store import Store

Severity = Literal["error", "warning", "info"]
ERROR: Severity = "error"
WARNING: Severity = "warning"
INFO: Severity = "info"

MAX_FINDINGS_PER_CHECK = 50
STORE_ENDS = ("", "-wal", "-shm", "-journal")
START_COVEN = "Start Coven (or `coven daemon`) to adopt or settle it"
LIVE_STATES = (OccurrenceState.CLAIMED.value, OccurrenceState.RUNNING.value)


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found. ``message`` is one line; ``details`` name what it is about."""

    check: str
    severity: Severity
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "message": self.message,
            "details": self.details,
        }


# --- running the checks -------------------------------------------------------------------


@dataclass(frozen=True)
class Leader:
    """Whether a scheduler watches the store: a lease, not expired (or its holder provably
    alive), whose holder is not gone."""

    lease: Lease | None
    watching: bool
    late: bool  # expired, but its holder is alive: a leader late renewing
    why_not: str  # when not watching: why, as the end of a sentence


@dataclass(frozen=True)
class Context:
    conn: apsw.Connection
    store: Store
    now: datetime
    leader: Leader
    keep_dirs_for: timedelta
    quick: bool

    @property
    def now_text(self) -> str:
        return instant_text(self.now)


@dataclass(frozen=True)
class Check:
    name: str
    find: Callable[[Context], Iterable[Finding]]
    passed: str | None = None  # the info line when it finds no error or warning


def run_check(check: Check, context: Context) -> list[Finding]:
    found = [replace(finding, check=check.name) for finding in _guarded(check, context)]
    if check.passed is not None and not any(f.severity != INFO for f in found):
        found.insert(0, Finding(check.name, INFO, check.passed))
    return _capped(check.name, found)


def _guarded(check: Check, context: Context) -> Iterator[Finding]:
    """A check that cannot read the store says so and lets the others run."""
    try:
        yield from check.find(context)
    except apsw.Error as error:
        yield finding(ERROR, f"the {check.name} check stopped: SQLite said {one_line(str(error))}"
                       " — the store file may be damaged (see the integrity check)")  # fmt: skip


def _capped(check: str, found: list[Finding]) -> list[Finding]:
    if len(found) <= MAX_FINDINGS_PER_CHECK:
        return found
    kept, rest = found[:MAX_FINDINGS_PER_CHECK], found[MAX_FINDINGS_PER_CHECK:]
    worst = next((s for s in (ERROR, WARNING) if any(f.severity == s for f in rest)), INFO)
    more = f"… and {len(rest)} more findings like these"
    return [*kept, Finding(check, worst, more, {"more": len(rest)})]


def finding(severity: Severity, message: str, **details: Any) -> Finding:
    """A finding of the check that yields it (the runner fills in ``check``)."""
    return Finding("", severity, message, details)


def iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def shown(stored: str | None) -> str:
    """A stored instant as people read it elsewhere in the CLI."""
    return "—" if stored is None else iso(instant_from(stored))


def one_line(text: str) -> str:
    return " ".join(text.split())
