"""Real processes on a real store: a harness that starts and kills ``coven daemon``.

The daemons run through ``python -m coven_core.testing``, which shifts their clocks
(``COVEN_TEST_CLOCK_OFFSET``) so that a moment the test chooses comes a few seconds after they
start, instead of at the next wall-clock minute.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from coven_core.clock import SystemClock
from coven_core.engine import Engine, open_engine
from coven_core.model import RevisionSpec


def wait_for(predicate: Callable[[], object], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)  # real-time: waiting on other processes, not on our scheduler
    return False


@dataclass
class Harness:
    data: Path
    target: datetime  # the shifted clock reads target - 3 s when the harness starts
    offset: timedelta
    daemons: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def engine(self) -> Engine:
        return open_engine(self.data, clock=SystemClock(offset=self.offset))

    def add(self, name: str, argv: tuple[str, ...], **options: object) -> str:
        at = self.target
        spec = RevisionSpec(schedule=f"once {at:%Y-%m-%dT%H:%M}", timezone="UTC", argv=argv,
                            **options)  # type: ignore[arg-type]  # fmt: skip
        engine = self.engine()
        try:
            return engine.operator.add_routine(name, spec)
        finally:
            engine.close()

    def start_daemon(
        self, env: Mapping[str, str] | None = None, args: tuple[str, ...] = ()
    ) -> subprocess.Popen[bytes]:
        """A ``coven daemon`` on this store; ``env`` adds variables (e.g. ``COVEN_FAILPOINT``),
        ``args`` options (``--log-level debug``)."""
        merged = {**os.environ, **self.env(), **(env or {})}
        daemon = subprocess.Popen(
            [sys.executable, "-m", "coven_core.testing", "daemon", *args], env=merged,
            stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        self.daemons.append(daemon)
        return daemon

    def env(self) -> dict[str, str]:
        """What every process on this store needs: its directory and the shifted clock."""
        return {"COVEN_TEST_CLOCK_OFFSET": str(self.offset.total_seconds()),
                "COVEN_DATA_DIR": str(self.data)}  # fmt: skip

    def kill(self, daemon: subprocess.Popen[bytes]) -> None:
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(10)

    def stop_all(self) -> list[str]:
        for daemon in self.daemons:
            if daemon.poll() is None:
                daemon.send_signal(signal.SIGTERM)
        return [d.communicate(timeout=30)[1].decode() for d in self.daemons]

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
        engine = self.engine()
        try:
            return list(engine.store.conn.execute(sql, params))
        finally:
            engine.close()

    def disposition(self, routine_id: str) -> str | None:
        rows = self.query(
            "SELECT disposition FROM occurrences WHERE routine_id = ? AND kind = 'scheduled'",
            (routine_id,),
        )
        return rows[0][0] if rows else None


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    real_now = datetime.now(UTC)
    target = (real_now + timedelta(minutes=2)).replace(second=0, microsecond=0)
    built = Harness(tmp_path / "data", target, (target - timedelta(seconds=3)) - real_now)
    yield built
    for daemon in built.daemons:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(10)
