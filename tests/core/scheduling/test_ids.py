"""Derived identifiers keep their spelling: an id written by an earlier version must be the
id this version derives for the same moment, or a re-planned moment would get a second row."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from coven_core.scheduling import ids
from coven_core.tz.binding import BoundTime, LocalTimeKind

instants = st.datetimes(timezones=st.just(UTC))


def moment(utc: datetime, kind: LocalTimeKind = LocalTimeKind.REGULAR) -> BoundTime:
    return BoundTime(utc.replace(tzinfo=None), utc, timedelta(0), 0, kind)


@given(instants)
def test_an_occurrence_id_spells_its_instant_as_strftime_does(utc: datetime) -> None:
    assert ids.occurrence_id("r1", moment(utc)) == f"r1@{utc.strftime('%Y%m%dT%H%M%SZ')}"


@given(instants)
def test_a_coalesced_id_spells_its_first_instant_as_strftime_does(first: datetime) -> None:
    assert ids.coalesced_id("r1", first) == f"r1@{first.strftime('%Y%m%dT%H%M%SZ')}~missed"


def test_a_nonexistent_wall_time_has_an_id_of_its_own() -> None:
    utc = datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    gap = ids.occurrence_id("r1", moment(utc, LocalTimeKind.NONEXISTENT))
    assert gap == "r1@20260329T013000Z~gap" != ids.occurrence_id("r1", moment(utc))


def test_an_early_year_keeps_strftimes_spelling() -> None:
    utc = datetime(999, 12, 31, 23, 59, 58, 5, tzinfo=UTC)
    assert ids.occurrence_id("r1", moment(utc)) == f"r1@{utc.strftime('%Y%m%dT%H%M%SZ')}"
