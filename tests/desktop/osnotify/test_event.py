"""The event value, its wake reason, the clock readings, and the zone bookkeeping."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone

import pytest

from coven_core.clock import VirtualClock, WakeReason
from coven_core.errors import ZoneError
from coven_desktop.osnotify import KINDS, Notifier, OsEvent, host_zone, wake_reason_for
from coven_desktop.osnotify.clocks import Clocks, Reading

Start = Callable[..., Notifier]
AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("sleeping", WakeReason.SYSTEM_SLEEPING),
        ("resumed", WakeReason.SYSTEM_RESUMED),
        ("clock_changed", WakeReason.CLOCK_JUMPED),
        ("timezone_changed", WakeReason.TIMEZONE_CHANGED),
    ],
)
def test_each_kind_has_its_engine_wake_reason(kind: str, reason: WakeReason | None) -> None:
    assert wake_reason_for(OsEvent(kind, AT, "test")) is reason  # type: ignore[arg-type]


def test_the_kinds_are_the_four_the_app_knows() -> None:
    assert sorted(KINDS) == ["clock_changed", "resumed", "sleeping", "timezone_changed"]


def test_an_event_refuses_an_unknown_kind_or_a_time_that_is_not_utc() -> None:
    with pytest.raises(ValueError, match="unknown"):
        OsEvent("rebooted", AT, "test")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="UTC"):
        OsEvent("resumed", datetime(2026, 3, 1, 9, 0), "test")
    with pytest.raises(ValueError, match="UTC"):
        OsEvent("resumed", AT.astimezone(timezone(timedelta(hours=2))), "test")


def test_events_are_frozen_values() -> None:
    event = OsEvent("resumed", AT, "logind", slept_seconds=5.0)
    assert event == OsEvent("resumed", AT, "logind", slept_seconds=5.0)
    with pytest.raises(AttributeError):
        event.kind = "sleeping"  # type: ignore[misc]


def test_readings_tell_sleep_from_a_step() -> None:
    before = Reading(AT, monotonic=100.0, boot=100.0)
    asleep = Reading(AT + timedelta(seconds=700), monotonic=200.0, boot=800.0)
    stepped = Reading(AT + timedelta(seconds=-500), monotonic=200.0, boot=200.0)
    assert (asleep.slept_since(before), asleep.stepped_since(before)) == (600.0, 0.0)
    assert (stepped.slept_since(before), stepped.stepped_since(before)) == (0.0, -600.0)


def test_the_injected_now_is_turned_to_utc_and_must_be_aware() -> None:
    berlin = timezone(timedelta(hours=1))
    clocks = Clocks(lambda: datetime(2026, 3, 1, 10, 0, tzinfo=berlin), float, float)
    assert clocks.utc_now() == AT and clocks.utc_now().tzinfo is UTC
    with pytest.raises(ValueError, match="aware"):
        Clocks(lambda: datetime(2026, 3, 1), float, float).read()


def test_an_unprovable_host_zone_is_unknown_until_a_source_names_one(
    start: Start, clock: VirtualClock
) -> None:
    def unprovable() -> str:
        raise ZoneError("/etc/localtime is a copy; pass an explicit zone")

    notifier = start(platform="plan9", local_zone=unprovable)
    events: list[OsEvent] = []
    notifier.occurred.connect(events.append)
    notifier.check_zone("drift")
    notifier.report_zone("timedated", "Asia/Tokyo")
    assert notifier.zone == "Asia/Tokyo"
    assert [(e.old_zone, e.new_zone) for e in events] == [(None, "Asia/Tokyo")]


def test_host_zone_resolves_the_local_zone_to_an_iana_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "America/New_York")
    assert host_zone() == "America/New_York"
