"""Instants in the store: what is written is read back exactly; nothing else is accepted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from coven_core.store.codec import instant_from, instant_text


@pytest.mark.parametrize(
    "instant",
    [
        datetime(2026, 3, 29, 1, 30, 5, 123456, tzinfo=UTC),
        datetime(2026, 1, 1, tzinfo=UTC),
        datetime(2026, 10, 25, 2, 30, tzinfo=timezone(timedelta(hours=2))),
    ],
)
def test_an_instant_is_read_back_exactly_in_utc(instant: datetime) -> None:
    read = instant_from(instant_text(instant))
    assert read == instant
    assert read.tzinfo is UTC


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-01T00:01:00,000000Z",  # a comma before the fraction
        "2026-01-01 00:01:00.000000Z",  # a space for the T
        "2026-01-01T00:01:00.000000+00:00",
        "2026-01-01T00:01:00Z",
        "2026-01-01T00:01:00.00000aZ",
        "2026-13-01T00:01:00.000000Z",
        "2026-W01-4T00:01:00.000000Z",  # a week date, which fromisoformat itself reads
        "\N{ARABIC-INDIC DIGIT TWO}026-01-01T00:01:00.000000Z",  # a digit, but not ASCII
        "",
    ],
)
def test_text_of_another_shape_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        instant_from(text)


def test_a_remembered_instant_does_not_let_a_naive_one_through() -> None:
    aware = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
    instant_text(aware)  # now remembered
    with pytest.raises(ValueError, match="aware"):
        instant_text(aware.replace(tzinfo=None))


def test_one_instant_has_one_text_whatever_its_zone() -> None:
    utc = datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    berlin = utc.astimezone(timezone(timedelta(hours=2)))
    assert instant_text(berlin) == instant_text(utc) == "2026-10-25T00:30:00.000000Z"


def test_the_two_passes_of_a_fold_keep_their_own_texts() -> None:
    """In one zone, 02:30 and the repeated 02:30 compare equal (Python compares wall times
    within a zone), yet they are an hour apart: neither may be written as the other."""
    berlin = ZoneInfo("Europe/Berlin")
    first = datetime(2026, 10, 25, 2, 30, tzinfo=berlin)
    second = first.replace(fold=1)
    assert first == second  # the trap
    assert instant_text(first) == "2026-10-25T00:30:00.000000Z"
    assert instant_text(second) == "2026-10-25T01:30:00.000000Z"
    assert instant_text(first) == "2026-10-25T00:30:00.000000Z"


def test_refused_text_stays_refused_and_good_text_reads_the_same_twice() -> None:
    good = "2026-05-01T12:00:00.000001Z"
    assert instant_from(good) == instant_from(good) == datetime(2026, 5, 1, 12, 0, 0, 1, UTC)
    for _ in range(2):
        with pytest.raises(ValueError):
            instant_from("2026-05-01T12:00:00Z")


def test_the_remembered_instants_stay_bounded() -> None:
    from coven_core.store import codec

    start = datetime(2026, 1, 1, tzinfo=UTC)
    for minute in range(3 * codec._KEEP):
        instant_from(instant_text(start + timedelta(minutes=minute)))
    assert len(codec._TEXTS) <= codec._KEEP
