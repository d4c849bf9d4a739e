"""``coven history NAME [--limit N]``: occurrences newest first, with how each one ended.

The history is made by the real scheduler under virtual time (the engine fixture, on the same
data directory as ``coven``), then read by the command.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from coven_core.clock import WakeReason
from tests.core.cli.conftest import Coven
from tests.core.conftest import T0, Engine, minutes

REQUIRED = {"occurrence_id", "run_id", "utc", "local", "offset", "disposition", "state", "reason"}


@pytest.fixture
def slept(engine: Engine) -> Engine:
    """every5 in Berlin ran at 12:00 UTC, slept three hours, then ran the latest once."""
    engine.add("every5", "*/5 * * * *", tz="Europe/Berlin")
    engine.run_until(T0 + minutes(2))
    engine.clock.suspend(timedelta(hours=3), notify=False)
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    engine.run_until(T0 + timedelta(hours=3, minutes=3))
    return engine


def test_json_shape_newest_first(coven: Coven, slept: Engine) -> None:
    doc = coven.json("history", "every5")
    assert set(doc) == {"routine", "occurrences"} and doc["routine"] == "every5"
    rows = doc["occurrences"]
    assert all(set(row) >= REQUIRED for row in rows)
    assert [r["utc"] for r in rows] == sorted((r["utc"] for r in rows), reverse=True)
    ended = [r for r in rows if r["state"] == "settled"]
    assert [(r["utc"], r["disposition"], r["reason"]) for r in ended] == [
        ("2026-03-01T15:00:00Z", "succeeded", None),
        ("2026-03-01T12:05:00Z", "skipped", "missed"),
        ("2026-03-01T12:00:00Z", "succeeded", None),
    ]
    latest, window, first = ended
    assert (latest["local"], latest["offset"]) == ("2026-03-01T16:00:00", "+01:00")
    assert latest["run_id"] and first["run_id"]
    assert window["window"] == {
        "first": "2026-03-01T12:05:00Z", "last": "2026-03-01T14:55:00Z", "count": 35,
        "cause": "asleep",
    }  # fmt: skip


def test_limit_keeps_the_newest(coven: Coven, slept: Engine) -> None:
    everything = coven.json("history", "every5")["occurrences"]
    assert coven.json("history", "every5", "--limit", "2")["occurrences"] == everything[:2]


def test_readable_table_shows_the_coalesced_window(
    coven: Coven, slept: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    status, out, _ = coven("history", "every5")
    assert status == 0
    header, *rows = out.splitlines()
    assert header.split() == ["UTC", "Ortszeit", "Ergebnis", "Grund"]  # German, as the dates
    window = next(row for row in rows if row.startswith("2026-03-01T12:05:00Z"))
    assert "01.03.2026, 13:05:00" in window  # Berlin wall time, German format
    outcome = " ".join(window.split()[3:])
    assert outcome == "skipped missed 35 (asleep) · 01.03.26, 13:05 → 01.03.26, 15:55"
    latest = next(row for row in rows if row.startswith("2026-03-01T15:00:00Z"))
    assert " ".join(latest.split()[3:]) == "succeeded caught up (asleep)"  # why it ran late
    first = next(row for row in rows if row.startswith("2026-03-01T12:00:00Z"))
    assert "caught up" not in first


def test_a_routine_without_occurrences(coven: Coven) -> None:
    coven.add("fresh", "--schedule", "@daily", "--tz", "UTC")
    assert coven.json("history", "fresh") == {"routine": "fresh", "occurrences": []}
    assert coven("history", "fresh")[1] == "No occurrences yet.\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["history", "nobody"], "no routine named 'nobody'"),
        (["history", "every5", "--limit", "0"], "0 must be at least 1"),
        (["history", "every5", "--limit", "many"], "'many' is not a whole number"),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(
    coven: Coven, slept: Engine, args: list[str], message: str
) -> None:
    coven.refuses(*args, message=message)
