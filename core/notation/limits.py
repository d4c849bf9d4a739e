"""The bounds of every number, duration and date a person can type (issue 19), in one place.

Each bound is far beyond any real use and keeps the arithmetic built on it exact: a date in
1970..9000 plus the longest duration (100 years) stays inside Python's ``datetime`` (year
9999), and no count makes a command run for minutes or fill memory. A value past a bound is
refused with a message that names the bound. Numbers are ASCII digits only: ``int()`` and
``\\d`` also read other scripts' digits (``١``), which nobody means in a schedule.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from coven_core.errors import ValidationError
from coven_core.notation.i18n import N_, _

EARLIEST_YEAR = 1970
LATEST_YEAR = 9000
#: No moment is planned, previewed or explained at or after this instant.
END_OF_PLANNING = datetime(LATEST_YEAR + 1, 1, 1, tzinfo=UTC)

LONGEST_DURATION = timedelta(days=36525)  # 100 years: a grace, a timeout, an interval
LONGEST_DURATION_TEXT = N_("100 years (36525d)")  # said with _() where shown

MOST_RETRIES = 100
MOST_QUARANTINE_AFTER = 1000
#: A day has 1,440 minutes: a budget above that is no budget, and a typo.
MOST_RUNS_PER_DAY = 1440
#: A cron step past its field's range keeps only the first value (``*/90``: minute 0), as in
#: classic cron; one with more digits than this is a typo.
MOST_CRON_STEP = 1000
#: ``--count`` and ``--limit``: how many moments or rows one command lists.
MOST_LISTED = 10_000

_ASCII_NUMBER = re.compile(r"-?[0-9]+")


def whole_number(text: str, most: int, least: int = 0) -> int:
    """A whole number in ``least..most`` written in ASCII digits, or a ValidationError that
    names the bound. The digits are counted before ``int()``, which is slow on thousands."""
    digits = text.strip()
    if not _ASCII_NUMBER.fullmatch(digits):
        raise ValidationError(_("{text!r} is not a whole number (digits 0-9)").format(text=text))
    magnitude = digits.lstrip("-").lstrip("0") or "0"
    if digits.startswith("-") and magnitude != "0":
        raise _too_small(digits[:20], least)
    if len(magnitude) > len(str(most)) or int(magnitude) > most:
        raise _too_large(digits[:20], most)
    if int(magnitude) < least:
        raise _too_small(digits[:20], least)
    return int(magnitude)


def at_most(value: int, most: int, what: str) -> int:
    if value > most:
        raise _too_large(what, most)
    return value


def check_duration(duration: timedelta, what: str) -> timedelta:
    if duration > LONGEST_DURATION:
        raise _too_large(what, _(LONGEST_DURATION_TEXT))
    return duration


def _too_small(what: str, least: int) -> ValidationError:
    return ValidationError(_("{what} must be at least {least}").format(what=what, least=least))


def _too_large(what: str, most: object) -> ValidationError:
    return ValidationError(_("{what} must be at most {most}").format(what=what, most=most))


def check_year(
    moment: datetime, what: str, error: type[ValidationError] = ValidationError
) -> datetime:
    """A date or instant whose year lies in EARLIEST_YEAR..LATEST_YEAR."""
    if not EARLIEST_YEAR <= moment.year <= LATEST_YEAR:
        raise error(
            _("{what}: the year {year} is outside {earliest}..{latest}").format(
                what=what, year=moment.year, earliest=EARLIEST_YEAR, latest=LATEST_YEAR
            )
        )
    return moment
