"""``coven doctor``: does the store keep Coven's promises? (DESIGN §10, §13)

:func:`doctor` reads the store (one snapshot, no write lock) and the attempt journals on disk,
and returns a :class:`Report` of findings. Each finding belongs to one check, has a severity
— ``error`` (the store contradicts a promise: something was lost, ran twice, claims a success
it cannot prove, or is stuck with nobody watching), ``warning`` (worth a look, nothing is
wrong yet) or ``info`` — and one line of text that names the problem and, where there is
one, the fix. ``Report.ok`` is true when there is no error.

The checks, in report order:

``integrity``
    SQLite ``PRAGMA integrity_check`` (``quick_check`` when ``quick``) and
    ``foreign_key_check``.
``schema``
    ``application_id`` is Coven's, ``user_version`` (major/minor) is this code's
    :data:`~coven_core.store.schema.CURRENT`, every migration up to it is recorded.
``location``
    The data directory and store files are private, owned by the user, not links and not on a
    network filesystem (:mod:`coven_core.store.location`); the attempts and output folders
    are private; the filesystem type (info).
``lease``
    Who leads, at which generation, and whether it is alive (info); a lease that expired
    while its holder is alive (a leader late renewing: asleep or stalled) is a warning.
``occurrences``
    A settled occurrence has exactly one disposition and a live one none. A ``claimed`` or
    ``running`` occurrence has an unsettled attempt fenced by the *current* generation of a
    lease that is watched (not expired, or its holder provably alive; never a holder that is
    gone) — otherwise nobody is watching it: error. ``recovery_required`` waits for a person:
    info. A ``planned`` occurrence whose time has passed while no scheduler watches the
    store is a **warning**, not an error: its row is durable and the next scheduler runs it
    (nothing is lost, nothing will run twice), it just has not happened yet. The same goes
    for an active routine's moments that passed unplanned (info without a scheduler,
    warning with one that fell behind by more than a lease's lifetime).
``attempts``
    At most one attempt of an occurrence is unsettled, it is the latest, and only a
    ``claimed``/``running`` occurrence has one; attempt n+1 was not claimed before attempt n
    settled (no two attempts overlapped) — judged by the event sequence stamped on each claim
    and settlement, never by wall-clock stamps, which a backward clock jump sends back.
``evidence``
    Every ``succeeded`` occurrence's last attempt exited 0, and when it has an attempt
    directory, its journal has an ``exited`` record with exit code 0 (not cancelled, not timed
    out). A directory that retention removed is fine once the attempt is older than the
    retention window (30 days by default); a missing directory of a newer attempt is a
    warning.
``ids``
    Every occurrence id is the one derived from its routine and moment (``~gap``, ``~missed``
    and ``manual~`` ids included), and no routine has two rows for one moment (a plain row
    and a ``~gap`` row at the same instant are fine).
``counters``
    ``routines.consecutive_failures`` matches the history: the failed or timed-out
    settlements of the routine's non-probe runs since its last success or release, counted as
    the engine counts them (a manual run counts; a retried-then-failed run counts once per
    settlement). A mismatch is a warning. (Retention keeps each routine's newest 1,000
    occurrences, so only a streak longer than that — quarantine disabled — could be
    misjudged.)
``references``
    Every attempt's and delivery's occurrence exists; a delivery belongs to a ``succeeded``
    occurrence; a ``reconciled`` occurrence has its row in ``reconciliations``.
``audit``
    The audit log's hash chain verifies (:func:`coven_core.integrity.audit.verify`); an error names
    the
    first broken entry.
``growth``
    Rows and bytes per table, the store file, its free pages and WAL, and the attempts and
    output folders (info; :func:`coven_core.integrity.retention.growth`). Skipped when ``quick``.

A check with no error or warning reports one ``info`` line saying what it verified (``lease``,
``audit`` and ``growth`` always report their own).
At most :data:`MAX_FINDINGS_PER_CHECK` findings are listed per check; the rest are counted
in one last finding of that check with their worst severity.

JSON (:meth:`Report.to_json`, printed by ``coven doctor --json``), stable::

    {
      "ok": true,                       # no error finding
      "checked_at": "2026-03-01T12:00:00Z",
      "summary": {"errors": 0, "warnings": 0, "info": 14},
      "checks": {"integrity": "ok", ...},   # per check, in order: "ok" | "warning" | "error"
      "findings": [
        {"check": "integrity", "severity": "info", "message": "…", "details": {…}},
        …
      ],
      "growth": {                       # null when quick
        "tables": {"occurrences": {"rows": 12, "bytes": 8192}, …},   # bytes null without dbstat
        "file_bytes": 90112, "free_bytes": 0, "wal_bytes": 4152, "measured_by": "dbstat",
        "attempts": {"path": "…/attempts", "files": 9, "bytes": 1234},
        "output": {"path": "…/output", "files": 3, "bytes": 15}
      }
    }

``details`` hold the ids a finding is about (``occurrence_id``, ``attempt_id``,
``routine_id``, ``generation``, …): strings, numbers, booleans or null; their keys may grow.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from coven_core.integrity.doctor.base import (
    ERROR,
    INFO,
    WARNING,
    Check,
    Context,
    Finding,
    Severity,
    iso,
    run_check,
    said,
)
from coven_core.integrity.doctor.growth import growth_findings, measured
from coven_core.integrity.doctor.lifecycle_checks import (
    check_lease,
    check_occurrences,
    check_routines,
    read_leader,
)
from coven_core.integrity.doctor.record_checks import (
    check_audit,
    check_counters,
    check_ids,
    check_references,
)
from coven_core.integrity.doctor.run_checks import check_attempts, check_evidence
from coven_core.integrity.doctor.store_checks import check_integrity, check_location, check_schema
from coven_core.integrity.retention import Growth, RetentionPolicy
from coven_core.notation.i18n import N_
from coven_core.store.schema import CURRENT
from coven_core.store.store import Store


@dataclass(frozen=True)
class Report:
    """Every finding, in check order; ``growth`` is None when the check was skipped."""

    checked_at: datetime
    findings: list[Finding]
    growth: Growth | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def errors(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [finding for finding in self.findings if finding.severity == WARNING]

    def count(self, severity: Severity) -> int:
        return sum(finding.severity == severity for finding in self.findings)

    def verdicts(self) -> dict[str, str]:
        """Per check, in order: ``error``, ``warning`` or ``ok``."""
        return {name: _verdict(self.findings, name) for name in CHECKS}

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "checked_at": iso(self.checked_at),
            "summary": {
                "errors": self.count(ERROR),
                "warnings": self.count(WARNING),
                "info": self.count(INFO),
            },
            "checks": self.verdicts(),
            "findings": [finding.to_json() for finding in self.findings],
            "growth": None if self.growth is None else dict(self.growth),
        }


def _verdict(findings: list[Finding], check: str) -> str:
    severities = {finding.severity for finding in findings if finding.check == check}
    for severity in (ERROR, WARNING):
        if severity in severities:
            return severity
    return "ok"


def doctor(
    store: Store, now: datetime, *, quick: bool = False, retention: RetentionPolicy | None = None,
    skip: Collection[str] = (),
) -> Report:  # fmt: skip
    """Check ``store`` as of ``now``. Reads only; never call it inside a transaction.

    ``quick`` runs SQLite's ``quick_check`` instead of the full ``integrity_check`` and skips
    the growth figures (for checking after every step of a simulation, which also ``skip``s
    the checks by name that say nothing there). ``retention`` says how long attempt
    directories are kept (the default policy when None).
    """
    keep_dirs_for = (retention or RetentionPolicy()).attempt_dirs_keep_for
    checks = [check for check in _CHECKS if check.name not in skip]
    with store.read() as conn:
        context = Context(conn, store, now, read_leader(conn, now), keep_dirs_for, quick)
        findings = [found for check in checks for found in run_check(check, context)]
    if quick:
        return Report(now, findings)
    usage = measured(store)
    findings += run_check(Check("growth", lambda _: growth_findings(usage)), context)
    return Report(now, findings, usage if isinstance(usage, dict) else None)


_CHECKS: tuple[Check, ...] = (
    Check("integrity", check_integrity,
          said(N_("SQLite finds the store file intact; every reference resolves"))),
    Check("schema", check_schema,
          said(N_("schema {version}, Coven's application id, migrations recorded"),
               version=f"{CURRENT.major}.{CURRENT.minor}")),
    Check("location", check_location,
          said(N_("the data directory and store files are private and local"))),
    Check("lease", check_lease),
    Check("routines", check_routines,
          said(N_("every routine's revision loads and binds its time zone"))),
    Check("occurrences", check_occurrences,
          said(N_("every past occurrence has one disposition or a live state someone watches"))),
    Check("attempts", check_attempts, said(N_("no two attempts of one occurrence overlapped"))),
    Check("evidence", check_evidence, said(N_("every success has its exit evidence"))),
    Check("ids", check_ids,
          said(N_("every occurrence id is derived from its moment; no moment twice"))),
    Check("counters", check_counters, said(N_("failure counters match the history"))),
    Check("references", check_references,
          said(N_("attempts, deliveries and decisions match their runs"))),
    Check("audit", check_audit),
)  # fmt: skip

CHECKS: tuple[str, ...] = (*(check.name for check in _CHECKS), "growth")
"""Every check's name, in report order."""

__all__ = ["CHECKS", "ERROR", "INFO", "WARNING", "Finding", "Report", "Severity", "doctor"]
