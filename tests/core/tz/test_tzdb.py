"""Choosing the tz database and knowing its version."""

from __future__ import annotations

import pytest

from coven_core.errors import ZoneError
from coven_core.tz import tzdb

SYSTEM = tzdb.Tzdb("system", "2025b", "/usr/share/zoneinfo")
BUNDLED = tzdb.Tzdb("bundled", "2026f", None)


@pytest.mark.parametrize(
    ("policy", "system", "bundled", "expected"),
    [
        ("newest", SYSTEM, BUNDLED, BUNDLED),
        ("newest", tzdb.Tzdb("system", "2027a", "/x"), BUNDLED, tzdb.Tzdb("system", "2027a", "/x")),
        ("system", SYSTEM, BUNDLED, SYSTEM),
        ("system", None, BUNDLED, BUNDLED),
        ("bundled", SYSTEM, BUNDLED, BUNDLED),
        ("newest", SYSTEM, None, SYSTEM),
    ],
)
def test_choose(policy, system, bundled, expected) -> None:
    assert tzdb.choose(policy, system, bundled) == expected


def test_unknown_policy_is_named() -> None:
    with pytest.raises(
        ZoneError, match="COVEN_TZDB='latest' is not one of newest, system, bundled"
    ):
        tzdb.choose("latest", SYSTEM, BUNDLED)


def test_tests_run_on_the_bundled_database() -> None:
    import tzdata

    assert tzdb.active() == tzdb.Tzdb("bundled", tzdata.IANA_VERSION, None)


@pytest.mark.parametrize(
    "key", ["Mars/Olympus", "", "localtime", "../etc/passwd", "/etc/localtime"]
)
def test_unknown_zone_is_named(key: str) -> None:
    with pytest.raises(ZoneError, match="unknown time zone"):
        tzdb.zone(key)


def test_available_zones_exclude_pseudo_keys() -> None:
    zones = tzdb.available_zones()
    assert "Europe/Berlin" in zones and "UTC" in zones
    assert "localtime" not in zones
