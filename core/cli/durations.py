"""Durations as ``coven`` options take them (the reading itself is
``coven_core.notation.durations``)."""

from __future__ import annotations

import argparse
from datetime import timedelta

from coven_core.notation.durations import (
    NO_LIMIT,
    DurationError,
    format_duration,
    parse_duration,
    parse_limit,
    parse_timeout,
)

__all__ = [
    "NO_LIMIT",
    "DurationError",
    "duration_argument",
    "format_duration",
    "limit_argument",
    "parse_duration",
    "parse_limit",
    "timeout_argument",
]


def limit_argument(text: str) -> timedelta | None:
    """For ``type=``: argparse prefixes the option, giving ``--grace: '5 minutes' is not …``."""
    try:
        return parse_limit(text)
    except DurationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def timeout_argument(text: str) -> timedelta | None:
    """For ``--timeout``: a duration, ``none`` (explicitly no limit) or ``default``."""
    try:
        return parse_timeout(text)
    except DurationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def duration_argument(text: str) -> timedelta:
    """For ``type=``: a duration that must be given (``none`` is not accepted)."""
    try:
        return parse_duration(text)
    except DurationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
