"""Overrun (issue #18): a run far longer than its routine usually takes raises one event and
an attention entry, at its own deadline, and is never stopped for it."""

from __future__ import annotations

from datetime import timedelta

from coven_core.scheduling import overrun
from coven_core.scheduling.scheduler import Scheduler
from coven_core.views.attention import attention
from tests.core.conftest import Engine, minutes


def _overruns(engine: Engine) -> list[tuple[str, str]]:
    return list(engine.store.conn.execute("SELECT at, data FROM events WHERE kind = 'overrun'"))


def _long_run(engine: Engine, name: str) -> str:
    """A run of ``name`` that goes on until the test ends it."""
    engine.runtime.auto_exit = None
    run = engine.operator.run_now(name)
    engine.run_until(engine.clock.now_utc())
    return run.run_id


def test_without_history_a_run_overruns_at_half_its_timeout_once(engine: Engine) -> None:
    engine.add("backup", "@yearly", timeout=timedelta(hours=2))
    started = engine.clock.now_utc()
    run_id = _long_run(engine, "backup")
    engine.run_until(started + minutes(59))
    assert _overruns(engine) == []
    engine.run_until(started + minutes(110))
    raised = _overruns(engine)
    assert len(raised) == 1
    # woken at the overrun's own deadline: no pass had to happen by chance to notice it
    assert raised[0][0].startswith((started + minutes(60)).strftime("%Y-%m-%dT%H:%M:%S"))
    assert engine.runtime.cancels == [] and len(engine.runtime.running) == 1  # never stopped
    (item,) = [i for i in attention(engine.store, engine.clock.now_utc()) if i.kind == "overrun"]
    assert item.run_id == run_id and item.usual_seconds is None
    assert item.running_seconds == timedelta(minutes=110).total_seconds()


def test_the_overrun_is_raised_once_across_a_restart(engine: Engine) -> None:
    engine.add("backup", "@yearly", timeout=timedelta(hours=2))
    started = engine.clock.now_utc()
    _long_run(engine, "backup")
    engine.run_until(started + minutes(70))
    again = Scheduler(engine.store, engine.clock, engine.runtime, engine.wake)
    again.pass_once("startup")
    again.pass_once("deadline")
    assert len(_overruns(engine)) == 1


def test_with_history_it_is_a_multiple_of_the_usual_time(engine: Engine) -> None:
    engine.add("sync", "@yearly")
    engine.runtime.auto_exit = None
    for _ in range(3):  # three successes of four minutes each
        engine.operator.run_now("sync")
        engine.run_until(engine.clock.now_utc())
        engine.clock.advance(minutes(4))
        engine.runtime.finish(engine.runtime.launches[-1], 0)
        engine.run_until(engine.clock.now_utc())
    started = engine.clock.now_utc()
    _long_run(engine, "sync")
    engine.run_until(started + minutes(13))  # 3 × 4 min is not enough: 4 min + 10 min is
    assert _overruns(engine) == []
    engine.run_until(started + minutes(180))
    assert len(_overruns(engine)) == 1
    (item,) = [i for i in attention(engine.store, engine.clock.now_utc()) if i.kind == "overrun"]
    assert overrun.describe(item.running_seconds, item.usual_seconds, "en_US") == (
        "running for 3 hr; usually 4 min"
    )
    engine.runtime.finish(engine.runtime.launches[-1], 0)
    engine.run_until(engine.clock.now_utc())
    assert [i for i in attention(engine.store, engine.clock.now_utc()) if i.kind == "overrun"] == []


def test_a_budget_past_the_timeout_leaves_it_to_the_timeout() -> None:
    usual, after = overrun.budget([3600.0] * 5, timedelta(hours=2))
    assert (usual, after) == (timedelta(hours=1), None)
    assert overrun.budget([], None) == (None, timedelta(hours=12))  # half the built-in day
    assert overrun.budget([1.0, 2.0, 3.0], timedelta(hours=1)) == (
        timedelta(seconds=2),
        timedelta(minutes=10, seconds=2),
    )
