"""Every instant in every ``--json`` output has its field's one format (issue 19, part 3).

The rule (README, "JSON output"): instants are UTC and end in ``Z``. Those of an occurrence's
stored lifecycle — what ``inspect`` and ``attention`` show as the evidence, where order within
one second matters — keep microseconds; every other instant (when something is or was due,
was done, expires) is to the second. Local wall times are naive. A field name has one format
wherever it appears; a timestamp under a name not declared here fails the test, so a new
field must take a side.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from tests.core.cli.conftest import Awaiting, Coven, react

CRONTAB = Path(__file__).parent.parent / "moving" / "data" / "crontab"

_DAY_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"
SECONDS = re.compile(_DAY_TIME + "Z")
MICROSECONDS = re.compile(_DAY_TIME + r"\.\d{6}Z")
LOCAL = re.compile(_DAY_TIME)
LOOKS_LIKE_A_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?")

FORMATS = {
    **dict.fromkeys(("at", "utc", "next_due", "last_at", "next_deadline", "expires_at",
                     "since", "planned_utc", "dst_window"), SECONDS),
    **dict.fromkeys(("scheduled_utc", "planned_at", "settled_at", "not_before", "claimed_at",
                     "dispatched_at", "started_at", "exited_at", "overrun_after",
                     "cancel_requested_at", "decided_at"), MICROSECONDS),
    **dict.fromkeys(("local", "local_time", "planned_local"), LOCAL),
}  # fmt: skip


def instants(document: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(field name, value) for every string that is a date and time, at any depth."""
    if isinstance(document, dict):
        for name, value in document.items():
            yield from instants(value, name)
    elif isinstance(document, list):
        for value in document:
            yield from instants(value, key)
    elif isinstance(document, str) and LOOKS_LIKE_A_TIME.fullmatch(document):
        yield key, document


def test_every_instant_has_its_fields_format(
    coven: Coven, awaiting: Awaiting, tmp_path: Path
) -> None:
    engine = awaiting.engine
    engine.add("other", "rrule:FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "America/New_York")
    engine.clock.advance(timedelta(microseconds=123456))  # a manual run's time has them
    done = coven.json("run-now", "other")["run_id"]
    react(engine)  # it runs and succeeds
    coven.json("cancel", done)
    waiting = coven.json("run-now", "other")["run_id"]
    coven.json("reconcile", awaiting.run_id, "--as", "failed", "--reason", "half a backup")
    coven.json("quarantine", "other", "--reason", "flaky")
    coven.add("later", "--schedule", "0 0 1 1 *", "--tz", "UTC")  # a next deadline
    commands = [
        ["status"], ["history", "backup"], ["history", "other"], ["attention"], ["audit"],
        ["inspect", awaiting.run_id], ["inspect", done], ["inspect", waiting],
        *(["list", "--state", state] for state in ("planned", "due", "recovery_required",
                                                   "quarantined", "paused")),
        ["routine", "list"], ["routine", "show", "backup"], ["explain", "backup"], ["config"],
        ["preview", "--schedule", "30 2 * * *", "--tz", "America/New_York",
         "--from", "2026-03-07", "--to", "2026-03-10"],
        ["runs"], ["run", "show", done], ["run", "show", awaiting.run_id],
        ["import", "crontab", str(CRONTAB), "--tz", "America/New_York"],
        ["export", "systemd", "backup", "later", "--out", str(tmp_path / "units")],
    ]  # fmt: skip
    seen: dict[str, int] = {}
    bad = []
    for args in commands:
        for name, value in instants(coven.json(*args)):
            if name not in FORMATS or not FORMATS[name].fullmatch(value):
                bad.append(f"coven {' '.join(args)}: {name} = {value}")
            seen[name] = seen.get(name, 0) + 1
    assert not bad, "\n".join(sorted(set(bad)))
    for args in commands:
        for name, value in instants(coven.json(*args)):
            assert name in FORMATS, f"coven {' '.join(args)}: {name} = {value} has no format"
            assert FORMATS[name].fullmatch(value), f"coven {' '.join(args)}: {name} = {value}"
            seen[name] = seen.get(name, 0) + 1
    assert {"at", "utc", "next_due", "last_at", "next_deadline", "expires_at", "since",
            "scheduled_utc", "started_at", "decided_at", "local", "local_time"} <= set(seen)  # fmt: skip
