"""The v1 DST policy as named vectors (DESIGN §3), across zones that break naive code."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coven_core.tz import tzdb
from coven_core.tz.binding import LocalTimeKind, at_instant, bind
from coven_core.tz.transitions import transition_for, transitions_between


def h(hours: float) -> timedelta:
    return timedelta(hours=hours)


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


# name, zone, wall time, kind, utc (nominal for gaps), offset used, other offset
VECTORS = [
    ("spring_gap_new_york", "America/New_York", datetime(2026, 3, 8, 2, 30),
     LocalTimeKind.NONEXISTENT, utc(2026, 3, 8, 7, 30), h(-5), h(-4)),
    ("fall_fold_new_york", "America/New_York", datetime(2026, 11, 1, 1, 30),
     LocalTimeKind.REPEATED, utc(2026, 11, 1, 5, 30), h(-4), h(-5)),
    ("regular_new_york", "America/New_York", datetime(2026, 7, 1, 9, 0),
     LocalTimeKind.REGULAR, utc(2026, 7, 1, 13, 0), h(-4), None),
    ("spring_gap_london", "Europe/London", datetime(2026, 3, 29, 1, 30),
     LocalTimeKind.NONEXISTENT, utc(2026, 3, 29, 1, 30), h(0), h(1)),
    ("fall_fold_london", "Europe/London", datetime(2026, 10, 25, 1, 30),
     LocalTimeKind.REPEATED, utc(2026, 10, 25, 0, 30), h(1), h(0)),
    ("half_hour_gap_lord_howe", "Australia/Lord_Howe", datetime(2026, 10, 4, 2, 15),
     LocalTimeKind.NONEXISTENT, utc(2026, 10, 3, 15, 45), h(10.5), h(11)),
    ("half_hour_fold_lord_howe", "Australia/Lord_Howe", datetime(2026, 4, 5, 1, 45),
     LocalTimeKind.REPEATED, utc(2026, 4, 4, 14, 45), h(11), h(10.5)),
    ("midnight_gap_sao_paulo_2018", "America/Sao_Paulo", datetime(2018, 11, 4, 0, 30),
     LocalTimeKind.NONEXISTENT, utc(2018, 11, 4, 3, 30), h(-3), h(-2)),
    ("skipped_day_apia_2011", "Pacific/Apia", datetime(2011, 12, 30, 9, 0),
     LocalTimeKind.NONEXISTENT, utc(2011, 12, 30, 19, 0), h(-10), h(14)),
    ("day_after_skip_apia_2011", "Pacific/Apia", datetime(2011, 12, 31, 9, 0),
     LocalTimeKind.REGULAR, utc(2011, 12, 30, 19, 0), h(14), None),
    ("no_dst_kolkata", "Asia/Kolkata", datetime(2026, 3, 8, 2, 30),
     LocalTimeKind.REGULAR, utc(2026, 3, 7, 21, 0), h(5.5), None),
]  # fmt: skip


@pytest.mark.parametrize(
    ("zone_key", "wall", "kind", "instant", "offset", "other"),
    [v[1:] for v in VECTORS],
    ids=[v[0] for v in VECTORS],
)
def test_binding_vector(zone_key, wall, kind, instant, offset, other) -> None:
    bound = bind(wall, tzdb.zone(zone_key))
    facts = (bound.kind, bound.utc, bound.offset, bound.other_offset)
    assert facts == (kind, instant, offset, other)
    assert bound.fold == 0
    assert bound.skipped == (kind is LocalTimeKind.NONEXISTENT)
    assert bound.reason == ("nonexistent_local_time" if bound.skipped else None)


@pytest.mark.parametrize(
    ("name", "zone_key", "wall", "jump_from", "jump_to"),
    [
        ("spring_gap_new_york", "America/New_York", datetime(2026, 3, 8, 2, 30), "02:00", "03:00"),
        ("fall_fold_new_york", "America/New_York", datetime(2026, 11, 1, 1, 30), "02:00", "01:00"),
        ("lord_howe_gap", "Australia/Lord_Howe", datetime(2026, 10, 4, 2, 15), "02:00", "02:30"),
        ("sao_paulo_midnight", "America/Sao_Paulo", datetime(2018, 11, 4, 0, 30), "00:00", "01:00"),
        ("apia_day", "Pacific/Apia", datetime(2011, 12, 30, 9, 0), "00:00", "00:00"),
    ],
)
def test_transition_for_names_the_clock_change(name, zone_key, wall, jump_from, jump_to) -> None:
    zone = tzdb.zone(zone_key)
    transition = transition_for(bind(wall, zone), zone)
    assert transition is not None
    assert f"{transition.wall_before:%H:%M}" == jump_from
    assert f"{transition.wall_after:%H:%M}" == jump_to


def test_apia_transition_skips_a_whole_calendar_day() -> None:
    zone = tzdb.zone("Pacific/Apia")
    transition = transition_for(bind(datetime(2011, 12, 30, 12), zone), zone)
    assert transition is not None
    assert transition.wall_before == datetime(2011, 12, 30)
    assert transition.wall_after == datetime(2011, 12, 31)


def test_transitions_between_lists_a_year_of_new_york() -> None:
    found = list(
        transitions_between(tzdb.zone("America/New_York"), utc(2026, 1, 1), utc(2027, 1, 1))
    )
    assert [t.utc for t in found] == [utc(2026, 3, 8, 7), utc(2026, 11, 1, 6)]
    assert [t.is_gap for t in found] == [True, False]


def test_transitions_between_is_empty_without_dst() -> None:
    zone = tzdb.zone("Asia/Kolkata")
    assert list(transitions_between(zone, utc(2026, 1, 1), utc(2027, 1, 1))) == []


def test_interval_instant_in_second_pass_reports_fold_one() -> None:
    bound = at_instant(utc(2026, 11, 1, 6, 30), tzdb.zone("America/New_York"))
    assert (bound.local, bound.fold, bound.offset) == (datetime(2026, 11, 1, 1, 30), 1, h(-5))
    assert bound.kind is LocalTimeKind.REPEATED


ZONES = ["America/New_York", "Europe/London", "Australia/Lord_Howe", "America/Sao_Paulo",
         "Pacific/Apia", "Asia/Kolkata", "Europe/Berlin", "Pacific/Chatham", "America/Santiago",
         "Africa/Casablanca", "Antarctica/Troll", "Asia/Tehran", "UTC"]  # fmt: skip


@given(
    zone_key=st.sampled_from(ZONES),
    wall=st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2037, 12, 30)),
)
def test_binding_round_trips_or_is_a_gap(zone_key: str, wall: datetime) -> None:
    zone = tzdb.zone(zone_key)
    bound = bind(wall, zone)
    back = bound.utc.astimezone(zone)
    if bound.skipped:
        assert back.replace(tzinfo=None) != wall  # truly nonexistent: no instant shows it
    else:
        assert back.replace(tzinfo=None) == wall
        assert back.utcoffset() == bound.offset
        assert back.fold == 0  # the first instant
