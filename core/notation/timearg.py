"""Reading the instants people type: ``2026-03-08T07:00Z``, ``2026-03-08T02:30``, ``2026-03-08``."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo

from coven_core.errors import ValidationError
from coven_core.notation.i18n import _
from coven_core.notation.limits import check_year
from coven_core.tz.binding import read_local


def parse_instant(text: str, zone: tzinfo, what: str = "time") -> datetime:
    """An aware UTC instant.

    With an offset or ``Z`` the text is an instant. Without, it is a local date or date-time
    read in ``zone`` the same way a schedule's wall time is (first pass in a fold,
    pre-transition offset in a gap), so a range and the moments in it always agree.
    """
    value = text.strip()
    normalised = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        parsed = datetime.fromisoformat(normalised)
    except ValueError:
        problem = _("{what}: {value!r} is not an ISO 8601 date or date-time "
                    "(like 2026-03-08, 2026-03-08T02:30 or 2026-03-08T07:00Z)")  # fmt: skip
        raise ValidationError(problem.format(what=what, value=value)) from None
    check_year(parsed, what)
    if parsed.tzinfo is not None:
        return parsed.astimezone(UTC)
    return read_local(parsed, zone)
