"""The engine's error hierarchy.

Every error a person can cause carries a message that names the problem; callers show
``str(error)`` as it is.
"""

from __future__ import annotations


class CovenError(Exception):
    """Base class for every error the engine raises on purpose."""


class Conflict(CovenError):
    """The request contradicts what is stored (exit status 3)."""


class ValidationError(CovenError):
    """Input that can never be accepted as it is (bad rule, unknown zone, bad option)."""


class ScheduleError(ValidationError):
    """A schedule spec that cannot be parsed or uses an unsupported part."""


class ZoneError(ValidationError):
    """A time zone that is unknown or cannot be proven (``local`` on an unresolvable host)."""
