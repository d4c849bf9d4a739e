"""Exclusion dates: local dates on which a routine's moments do not run (DESIGN §4, §14).

RFC 5545 EXDATE semantics, on the local date in the routine's zone: the rule still yields
the moment (so COUNT counts it), and the planner records it as skipped with reason
``excluded_date`` instead of running it. A nonexistent wall time stays a gap: the DST policy
decides it first.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date

from coven_core.errors import ValidationError
from coven_core.notation.i18n import _
from coven_core.tz.binding import BoundTime

EXCLUDED_DATE = "excluded_date"


def parse_date(text: str) -> date:
    """``YYYY-MM-DD``; raises ValidationError naming the text otherwise."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise ValidationError(
            _("{text!r} is not a date like 2026-12-24").format(text=text)
        ) from None


def normalised(dates: Iterable[date]) -> tuple[date, ...]:
    """Each date once, in order: two revisions that exclude the same days compare equal."""
    return tuple(sorted(set(dates)))


def excludes(dates: tuple[date, ...], moment: BoundTime) -> bool:
    """Whether ``moment`` falls on an excluded local date (a gap is the DST policy's)."""
    return bool(dates) and not moment.skipped and moment.local.date() in dates


def dates_text(dates: Iterable[date]) -> str:
    return ", ".join(day.isoformat() for day in dates)
