"""Instants in the store: what is written is read back exactly; nothing else is accepted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

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
        "",
    ],
)
def test_text_of_another_shape_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        instant_from(text)
