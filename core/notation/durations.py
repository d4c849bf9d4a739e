"""Durations as people type them: ``90s``, ``15m``, ``2h``, ``1d``, ``1h30m``; ``none``.

One reading for every front end: the ``coven`` options (``--grace``, ``--timeout``) and the
desktop's routine form.

A routine's timeout has three values, not two (DESIGN §6: every run has a timeout unless a
person said ``none``): a duration; ``none``, said explicitly and stored as :data:`NO_TIMEOUT`
(zero, which no duration can be); and ``default`` (``None``: the global setting at dispatch,
also what a routine stored before the setting existed means)."""

from __future__ import annotations

import math
import re
from datetime import timedelta

from coven_core.errors import ValidationError
from coven_core.notation.i18n import N_, _
from coven_core.notation.limits import LONGEST_DURATION, LONGEST_DURATION_TEXT

# Largest unit first, each at most once: "1h30m" reads one way only; "30m1h" is a typo.
# ASCII digits only: ``\d`` also reads other scripts' digits (``١``).
_PATTERN = re.compile(r"(?:([0-9]+)d)?(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")
_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_MOST_DIGITS = 10  # every bounded duration has fewer, in any unit
NO_LIMIT = "none"
DEFAULT = "default"
#: A routine's timeout when a person said ``none``: a zero duration, which no typed one can be.
NO_TIMEOUT = timedelta(0)


class DurationError(ValidationError):
    def __init__(self, text: str, problem: str = N_("{text!r} is not a duration like 90s, 15m, 2h "
                                                   "or 1d")):  # fmt: skip
        super().__init__(_(problem).format(text=text, longest=_(LONGEST_DURATION_TEXT)))


def parse_duration(text: str) -> timedelta:
    """A positive duration, or a DurationError that quotes what was typed."""
    value = text.strip().lower()
    match = _PATTERN.fullmatch(value)
    if not value or match is None:
        raise DurationError(text)
    seconds = _seconds(match.groups())
    if seconds > LONGEST_DURATION.total_seconds():
        raise DurationError(text, N_("{text!r} is longer than {longest}, the longest allowed"))
    if seconds == 0:
        raise DurationError(text, N_("{text!r} is not longer than zero"))
    return timedelta(seconds=seconds)


def _seconds(numbers: tuple[str | None, ...]) -> float:
    """The sum, or infinity for digits past any bound (``int()`` is slow on thousands)."""
    sizes = [size for _, size in _UNITS]
    digits = [(n.lstrip("0") or "0", size) for n, size in zip(numbers, sizes, strict=True) if n]
    if any(len(n) > _MOST_DIGITS for n, _ in digits):
        return math.inf
    return sum(int(n) * size for n, size in digits)


def parse_limit(text: str) -> timedelta | None:
    """A duration, or ``none`` for no limit."""
    return None if text.strip().lower() == NO_LIMIT else parse_duration(text)


def parse_timeout(text: str) -> timedelta | None:
    """A routine's timeout: a duration, ``none`` (:data:`NO_TIMEOUT`) or ``default`` (None)."""
    if text.strip().lower() == DEFAULT:
        return None
    limit = parse_limit(text)
    return NO_TIMEOUT if limit is None else limit


def format_timeout(timeout: timedelta | None) -> str:
    """The inverse of :func:`parse_timeout`: ``2h``, ``none``, ``default``."""
    if timeout is None:
        return DEFAULT
    return NO_LIMIT if timeout == NO_TIMEOUT else format_duration(timeout)


def format_duration(duration: timedelta | None) -> str:
    """The inverse of :func:`parse_limit`: ``1h30m``, ``none``."""
    if duration is None:
        return NO_LIMIT
    rest, parts = int(duration.total_seconds()), []
    for unit, size in _UNITS:
        count, rest = divmod(rest, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"
