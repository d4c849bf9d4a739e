"""More outputs due than one pass may deliver: the scheduler goes on until all are delivered,
without waiting for anything else to wake it (§3, §11)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coven_core.runtime.base import Launch, Started
from tests.core.conftest import T0, Engine, ScriptedRuntime, make_engine, minutes


@dataclass
class PrintingRuntime(ScriptedRuntime):
    """Each command prints one line and ends at once, its output in an attempt directory."""

    root: Path = Path()

    def start(self, launch: Launch) -> Started:
        super().start(launch)
        directory = self.root / launch.attempt_id
        directory.mkdir(parents=True)
        (directory / "stdout").write_text(f"{launch.routine_id}\n", encoding="utf-8")
        return Started(4242, None, str(directory))


def engine_with_output(tmp_path: Path, clock, **limits: object) -> Engine:  # type: ignore[no-untyped-def]
    engine = make_engine(tmp_path / "data", clock, **limits)
    runtime = PrintingRuntime(clock, engine.wake, root=tmp_path / "attempts")
    engine.runtime = engine.scheduler.runtime = runtime  # type: ignore[assignment]
    return engine


def delivered(engine: Engine) -> int:
    query = "SELECT count(*) FROM deliveries WHERE state = 'delivered'"
    return int(engine.store.conn.execute(query).fetchone()[0])


def test_outputs_beyond_one_pass_are_delivered_without_another_wake(tmp_path, clock) -> None:
    engine = engine_with_output(tmp_path, clock, deliveries=3, max_active=10)
    due = T0 + minutes(1)
    for index in range(7):
        engine.add(f"r{index}", f"once {due:%Y-%m-%dT%H:%M}")
    engine.run_until(due + minutes(1))
    assert delivered(engine) == 7


def test_a_full_batch_of_deliveries_asks_for_another_pass_at_once(tmp_path, clock) -> None:
    engine = engine_with_output(tmp_path, clock, deliveries=3, max_active=10)
    due = T0 + minutes(1)
    for index in range(4):
        engine.add(f"r{index}", f"once {due:%Y-%m-%dT%H:%M}")
    engine.scheduler.pass_once("startup")
    engine.clock.advance_to(due)
    assert engine.scheduler.pass_once("deadline").dispatched == 4  # each ends at once
    report = engine.scheduler.pass_once("run_finished")
    assert report.settled == 4 and delivered(engine) == 3
    assert engine.scheduler.deadline == report.started_at
    engine.scheduler.pass_once("deadline")
    assert delivered(engine) == 4


@dataclass
class QuietRuntime(PrintingRuntime):
    """Like PrintingRuntime, but the routines in ``quiet`` print nothing."""

    quiet: frozenset[str] = frozenset()

    def start(self, launch: Launch) -> Started:
        started = super().start(launch)
        if launch.routine_id in self.quiet:
            (Path(started.attempt_dir or "") / "stdout").write_bytes(b"")
        return started


def test_a_success_that_printed_nothing_has_nothing_to_deliver(tmp_path, clock) -> None:
    """No empty file, no fsyncs and no receipt for it; its run is still a success on record."""
    engine = make_engine(tmp_path / "data", clock)
    due = T0 + minutes(1)
    quiet = engine.add("quiet", f"once {due:%Y-%m-%dT%H:%M}")
    loud = engine.add("loud", f"once {due:%Y-%m-%dT%H:%M}")
    runtime = QuietRuntime(clock, engine.wake, root=tmp_path / "attempts", quiet=frozenset({quiet}))
    engine.runtime = engine.scheduler.runtime = runtime  # type: ignore[assignment]
    engine.run_until(due + minutes(1))
    rows = engine.store.conn.execute(
        "SELECT o.routine_id, o.disposition, d.state FROM occurrences o "
        "LEFT JOIN deliveries d ON d.occurrence_id = o.id"
    ).fetchall()
    assert sorted(rows) == sorted([(quiet, "succeeded", None), (loud, "succeeded", "delivered")])
    assert not (tmp_path / "data" / "output" / quiet).exists()
    assert len(list((tmp_path / "data" / "output" / loud).iterdir())) == 1
