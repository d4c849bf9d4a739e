"""Two real ``coven daemon`` processes on one store: every occurrence dispatched exactly once
(DESIGN §9). Real processes, real time; their clocks are shifted so the moment they
compete for comes three seconds after they start instead of at the next wall-clock minute."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from coven_core.clock import SystemClock
from coven_core.engine import open_engine
from coven_core.model import RevisionSpec

ROUTINES = 40


def _wait_for(predicate, timeout: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)  # real-time: waiting on other processes, not on our scheduler
    return False


def _settled(data: Path, target: datetime) -> int:
    engine = open_engine(data)
    try:
        row = engine.store.conn.execute(
            "SELECT count(*) FROM occurrences WHERE state = 'settled' AND scheduled_utc LIKE ?",
            (target.strftime("%Y-%m-%dT%H:%M:00") + "%",),
        ).fetchone()
        return int(row[0])
    finally:
        engine.close()


def test_two_daemons_dispatch_each_occurrence_exactly_once(tmp_path: Path) -> None:
    data, marker = tmp_path / "data", tmp_path / "marker"
    real_now = datetime.now(UTC)
    target = (real_now + timedelta(minutes=2)).replace(second=0, microsecond=0)
    offset = (target - timedelta(seconds=3)) - real_now
    engine = open_engine(data, clock=SystemClock(offset=offset))
    for index in range(ROUTINES):
        name = f"r{index:02d}"
        spec = RevisionSpec(
            schedule=f"{target.minute} {target.hour} * * *", timezone="UTC",
            argv=("sh", "-c", f"echo {name} >> {marker}"),
        )  # fmt: skip
        engine.operator.add_routine(name, spec)
    engine.close()

    env = {**os.environ, "COVEN_TEST_CLOCK_OFFSET": str(offset.total_seconds()),
           "COVEN_DATA_DIR": str(data)}  # fmt: skip
    command = [sys.executable, "-m", "coven_core.testing", "daemon"]  # on the shifted clock
    daemons = [subprocess.Popen(command, env=env, stderr=subprocess.PIPE) for _ in range(2)]
    try:
        assert _wait_for(lambda: _settled(data, target) == ROUTINES, timeout=60)
    finally:
        for daemon in daemons:
            daemon.send_signal(signal.SIGTERM)
        outputs = [daemon.communicate(timeout=30)[1].decode() for daemon in daemons]
    assert [d.returncode for d in daemons] == [0, 0], outputs
    lines = marker.read_text().split()
    assert sorted(lines) == [f"r{index:02d}" for index in range(ROUTINES)]  # each exactly once

    engine = open_engine(data)
    conn = engine.store.conn
    attempts = conn.execute("SELECT count(*), count(DISTINCT occurrence_id) FROM attempts")
    assert attempts.fetchone() == (ROUTINES, ROUTINES)
    roles = {row[0] for row in conn.execute("SELECT role FROM passes")}
    assert roles == {"leader", "standby"}
    engine.close()
