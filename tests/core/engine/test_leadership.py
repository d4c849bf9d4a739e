"""One leader per store, fenced by a monotonic generation (DESIGN §9)."""

from __future__ import annotations

from datetime import timedelta

import apsw
import pytest

from coven_core.clock import SAFETY_CAP
from coven_core.scheduling import lease
from coven_core.scheduling.lease import LEASE_TTL, RENEW_AFTER, Fenced, Holder
from coven_core.store.schema import CURRENT
from coven_core.store.store import Store
from tests.core.conftest import T0, make_engine, minutes
from tests.core.runner.conftest import step_the_wall_clock


def test_second_scheduler_on_a_store_is_standby(tmp_path, clock) -> None:
    leader = make_engine(tmp_path / "d", clock)
    standby = make_engine(tmp_path / "d", clock)
    assert leader.scheduler.pass_once("startup").role == "leader"
    report = standby.scheduler.pass_once("startup")
    assert report.role == "standby"
    assert standby.scheduler.deadline == leader.scheduler.lease.expires_at


def test_standby_takes_over_after_expiry_with_a_new_generation(tmp_path, clock) -> None:
    leader = make_engine(tmp_path / "d", clock)
    standby = make_engine(tmp_path / "d", clock)
    leader.scheduler.pass_once("startup")
    clock.advance(LEASE_TTL + timedelta(seconds=1))
    report = standby.scheduler.pass_once("deadline")
    assert (report.role, report.generation) == ("leader", 2)


def test_stale_leader_is_refused_and_stands_down(tmp_path, clock) -> None:
    old = make_engine(tmp_path / "d", clock)
    new = make_engine(tmp_path / "d", clock)
    rid = old.add("r", "* * * * *")
    old.scheduler.pass_once("startup")
    clock.advance(LEASE_TTL + timedelta(seconds=1))
    new.scheduler.pass_once("deadline")  # takes over: generation 2
    with old.store.write() as conn, pytest.raises(Fenced, match="generation 1 is stale"):
        lease.check_fence(conn, 1)
    report = old.scheduler.pass_once("deadline")  # its lease is gone: it must not plan
    assert report.role == "standby" and report.planned == 0
    launched = [x.occurrence_id for x in old.runtime.launches + new.runtime.launches]
    assert len(launched) == len(set(launched))
    del rid


def test_dead_holder_on_this_host_is_taken_over_at_once(tmp_path, clock) -> None:
    engine = make_engine(tmp_path / "d", clock)
    ghost = Holder(Holder.of_this_process().host, 2**22 + 7, 1.0, "dead")
    with engine.store.write() as conn:
        lease.acquire(conn, ghost, clock.now_utc())
    report = engine.scheduler.pass_once("startup")
    assert (report.role, report.generation) == ("leader", 2)


def test_a_busy_store_fails_the_pass_cleanly_and_it_retries(tmp_path, clock) -> None:
    engine = make_engine(tmp_path / "d", clock)
    engine.add("r", "*/5 * * * *")
    engine.store.conn.set_busy_timeout(20)
    blocker = apsw.Connection(str(engine.store.path))
    blocker.execute("BEGIN IMMEDIATE")
    report = engine.scheduler.pass_once("startup")
    assert report.error_class == "store_busy"
    assert report.deadline == T0 + timedelta(seconds=5)
    blocker.execute("ROLLBACK")
    engine.run_until(T0 + minutes(1))
    assert engine.scheduler.last_report.error_class is None
    assert len(engine.runtime.launches) == 1


def test_store_reopens_with_the_same_schema(tmp_path, clock) -> None:
    engine = make_engine(tmp_path / "d", clock)
    engine.store.close()
    again = Store.open(tmp_path / "d", clock.now_utc())
    assert again.conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT.user_version
    again.close()


def test_standby_is_woken_the_moment_the_leader_lets_go(tmp_path, clock) -> None:
    leader = make_engine(tmp_path / "d", clock)
    standby = make_engine(tmp_path / "d", clock)
    leader.scheduler.pass_once("startup")
    standby.scheduler.pass_once("startup")
    assert standby.scheduler.leader_lock.watching
    leader.scheduler.shutdown()  # drops the lock, as a crash would
    with standby.wake.condition:  # real-time: the watcher thread is a real OS wait
        assert standby.wake.condition.wait_for(standby.wake.is_set, timeout=5)
    reason = standby.wake.take()
    assert reason is not None and reason.value == "leader_gone"
    assert standby.scheduler.pass_once(reason.value).role == "leader"


# Renewal: every scheduler transaction reads the lease; a pass rewrites it once a minute --------


def held(engine) -> lease.Lease:  # type: ignore[no-untyped-def]
    with engine.store.read() as conn:
        found = lease.current(conn)
    assert found is not None
    return found


def test_a_pass_within_a_minute_of_the_last_renewal_leaves_the_lease_as_it_is(
    tmp_path, clock
) -> None:
    engine = make_engine(tmp_path / "d", clock)
    engine.scheduler.pass_once("startup")
    first = held(engine)
    clock.advance(RENEW_AFTER - timedelta(seconds=1))
    engine.scheduler.pass_once("deadline")
    assert held(engine) == first
    clock.advance(timedelta(seconds=1))
    engine.scheduler.pass_once("deadline")
    assert held(engine).expires_at == clock.now_utc() + LEASE_TTL


def test_a_live_leader_passing_at_the_safety_cap_always_has_a_cap_left(tmp_path, clock) -> None:
    """The lease outlives one whole missed pass, as it did when every pass renewed it."""
    engine = make_engine(tmp_path / "d", clock)
    for step in (timedelta(seconds=50), SAFETY_CAP, timedelta(seconds=10), SAFETY_CAP) * 3:
        engine.scheduler.pass_once("deadline")
        assert held(engine).expires_at - (clock.now_utc() + SAFETY_CAP) > SAFETY_CAP
        clock.advance(step)


def test_a_released_lease_is_rewritten_by_its_holder_at_once(tmp_path, clock) -> None:
    engine = make_engine(tmp_path / "d", clock)
    engine.scheduler.pass_once("startup")
    with engine.store.write() as conn:
        lease.release(conn, engine.scheduler.holder, clock.now_utc())
    engine.scheduler.pass_once("deadline")
    assert held(engine).expires_at == clock.now_utc() + LEASE_TTL


def test_a_wall_clock_set_back_rewrites_the_expiry_from_now(tmp_path, clock) -> None:
    engine = make_engine(tmp_path / "d", clock)
    engine.scheduler.pass_once("startup")
    clock.jump_wall(timedelta(hours=-1), notify=False)
    engine.scheduler.pass_once("clock_jumped")
    assert held(engine).expires_at == clock.now_utc() + LEASE_TTL


def test_a_wall_clock_step_does_not_make_the_live_holder_look_gone(monkeypatch) -> None:
    """The soak's fault (issue #18): Linux derives start times since the epoch from the wall
    clock, so a step made the live leader's recorded start time disagree with its own."""
    me = Holder.of_this_process()
    step_the_wall_clock(monkeypatch, hours=-2)
    assert lease.holder_is_alive(me.token) and not lease.holder_is_gone(me.token)
    assert lease.holder_is_gone(me._replace(boot="a-boot-that-is-over").token)


def test_a_token_from_before_marks_still_names_its_holder() -> None:
    import psutil

    me = Holder.of_this_process()
    before_marks = f"{me.host}/{me.pid}/{psutil.Process(me.pid).create_time():.3f}/{me.nonce}"
    parsed = Holder.parse(before_marks)
    assert parsed is not None and (parsed.pid, parsed.nonce, parsed.boot) == (me.pid, me.nonce, "")
    assert lease.holder_is_alive(before_marks)
