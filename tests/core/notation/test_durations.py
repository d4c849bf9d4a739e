"""Durations as people type them (``--grace``, ``--timeout``, the routine form)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from coven_core.notation.durations import (
    DurationError,
    format_duration,
    parse_duration,
    parse_limit,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("15m", 900), ("2h", 7200), ("1d", 86400), ("1h30m", 5400),
     ("1d2h3m4s", 93784), (" 2H ", 7200)],
)  # fmt: skip
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["5 minutes", "", "15", "m", "30m1h", "1h1h", "-5m", "1.5h"])
def test_what_is_not_a_duration_is_quoted_back(text: str) -> None:
    with pytest.raises(DurationError) as raised:
        parse_duration(text)
    assert str(raised.value) == f"{text!r} is not a duration like 90s, 15m, 2h or 1d"


def test_zero_is_refused() -> None:
    with pytest.raises(DurationError, match="is not longer than zero"):
        parse_duration("0m")


def test_none_means_no_limit_and_round_trips() -> None:
    assert parse_limit("none") is None and parse_limit("None") is None
    assert format_duration(None) == "none"
    for text in ("15m", "1h30m", "1d2h3m4s"):
        assert format_duration(parse_limit(text)) == text
    assert format_duration(parse_limit("90s")) == "1m30s"
