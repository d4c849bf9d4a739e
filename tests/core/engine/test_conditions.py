"""Conditions (issue #23, DESIGN §14): a moment waits within its grace for mains power or the
network, woken when the host's state changes, then is skipped with the state it saw."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from coven_core.clock import VirtualClock, WakeReason
from coven_core.host import HostState, HostWatch, Network, Power, read_power, read_route
from coven_core.views.explain import explain_occurrence
from tests.core.conftest import T0, Engine, make_engine
from tests.core.engine.test_policies import decision_of, outcomes

ON_BATTERY = HostState(Power.BATTERY, Network.ONLINE, "upower", "networkmanager")


@pytest.fixture
def host(engine: Engine) -> HostWatch:
    """The host's state the test sets; a change wakes the scheduler, as the app's watch does."""
    watch = HostWatch(ON_BATTERY, lambda: engine.wake.set(WakeReason.CONDITIONS_CHANGED))
    engine.scheduler.host = watch
    return watch


def test_a_moment_on_battery_waits_and_runs_when_power_returns(
    engine: Engine, host: HostWatch
) -> None:
    rid = engine.add("backup", "0 13 * * *", on_ac_power=True, grace=timedelta(hours=1))
    engine.run_until(T0 + timedelta(hours=1, minutes=20))
    assert outcomes(engine, rid) == [("2026-03-01T13:00", "planned", None)]
    assert engine.runtime.launches == []
    host.set(power=Power.AC)  # the wake, not a poll, brings the pass
    assert engine.wake.is_set()
    engine.run_until(engine.clock.now_utc())
    assert outcomes(engine, rid) == [("2026-03-01T13:00", "succeeded", None)]
    assert engine.runtime.launches[0].occurrence_id.startswith(rid)


def test_unmet_through_the_grace_is_skipped_with_the_state_seen(
    engine: Engine, host: HostWatch
) -> None:
    rid = engine.add("backup", "0 13 * * *", on_ac_power=True, when_online=True,
                     grace=timedelta(minutes=30))  # fmt: skip
    engine.run_until(T0 + timedelta(hours=1, minutes=29))
    assert outcomes(engine, rid)[0][1] == "planned"
    engine.run_until(T0 + timedelta(hours=1, minutes=31))  # the grace's end is a deadline
    assert outcomes(engine, rid) == [("2026-03-01T13:00", "skipped", "condition_unmet")]
    assert decision_of(engine, rid, "2026-03-01T13") == {
        "power": "battery", "power_source": "upower", "network": "online",
        "network_source": "networkmanager", "unmet": ["on_ac_power"],
    }  # fmt: skip
    (oid,) = engine.store.conn.execute(
        "SELECT id FROM occurrences WHERE routine_id = ?", (rid,)
    ).fetchone()
    told = explain_occurrence(engine.store, oid, "en_US")
    assert told.outcome == (
        "It was skipped (its conditions were not met). Its conditions were not met through "
        "its grace: the machine was on battery power (upower) and the machine was online "
        "(networkmanager)."
    )
    assert engine.runtime.launches == []


def test_without_a_grace_a_later_moment_takes_over_the_wait(
    engine: Engine, host: HostWatch
) -> None:
    rid = engine.add("hourly", "0 * * * *", when_online=True)
    host.set(network=Network.OFFLINE)
    engine.run_until(T0 + timedelta(hours=2, minutes=5))
    assert [o[1:] for o in outcomes(engine, rid)] == [
        ("skipped", "condition_unmet"), ("skipped", "condition_unmet"), ("planned", None),
    ]  # fmt: skip
    host.set(network=Network.ONLINE)
    engine.run_until(engine.clock.now_utc())
    assert outcomes(engine, rid)[-1][1] == "succeeded"
    assert len(engine.runtime.launches) == 1


def test_an_unknown_state_meets_the_condition(engine: Engine, host: HostWatch) -> None:
    host.set(power=Power.UNKNOWN, power_source="none")
    rid = engine.add("backup", "0 13 * * *", on_ac_power=True)
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    assert outcomes(engine, rid) == [("2026-03-01T13:00", "succeeded", None)]


def test_a_persons_run_goes_ahead_and_is_marked(engine: Engine, host: HostWatch) -> None:
    rid = engine.add("backup", "0 13 * * *", on_ac_power=True)
    engine.operator.run_now("backup")
    engine.run_until(T0 + timedelta(minutes=1))
    (decision,) = engine.store.conn.execute(
        "SELECT decision FROM occurrences WHERE routine_id = ? AND kind = 'manual'", (rid,)
    ).fetchone()
    assert json.loads(decision)["conditions"]["unmet"] == ["on_ac_power"]
    assert len(engine.runtime.launches) == 1


def test_a_trial_routine_waits_and_shadows_the_skip(engine: Engine, host: HostWatch) -> None:
    rid = engine.add("trial", "0 13 * * *", on_ac_power=True, shadow=True,
                     grace=timedelta(minutes=10))  # fmt: skip
    engine.run_until(T0 + timedelta(hours=2))
    assert outcomes(engine, rid) == [("2026-03-01T13:00", "shadowed", "condition_unmet")]


def test_a_routine_without_conditions_never_reads_the_host(tmp_path: Path) -> None:
    engine = make_engine(tmp_path / "d", VirtualClock(T0))

    class Refusing:
        def state(self) -> HostState:
            raise AssertionError("read without a condition")

    engine.scheduler.host = Refusing()
    engine.add("plain", "0 13 * * *")
    engine.run_until(T0 + timedelta(hours=2))
    assert len(engine.runtime.launches) == 1
    engine.store.close()


def test_the_portable_reading_of_power_and_routes(tmp_path: Path) -> None:
    supplies = tmp_path / "power_supply"
    for name, kind, field, value in (
        ("AC", "Mains", "online", "0"),
        ("BAT0", "Battery", "present", "1"),
    ):
        (supplies / name).mkdir(parents=True)
        (supplies / name / "type").write_text(kind + "\n")
        (supplies / name / field).write_text(value + "\n")
    assert read_power(supplies) is Power.BATTERY
    (supplies / "AC" / "online").write_text("1\n")
    assert read_power(supplies) is Power.AC
    assert read_power(tmp_path / "absent") is Power.UNKNOWN
    route = tmp_path / "route"
    header = "Iface\tDestination\tGateway\tFlags\n"
    route.write_text(header + "lo\t0000007F\t00000000\t0001\n")
    assert read_route(route) is Network.OFFLINE
    route.write_text(header + "eth0\t00000000\t0100A8C0\t0003\n")
    assert read_route(route) is Network.ONLINE
    assert read_route(tmp_path / "none") is Network.UNKNOWN
