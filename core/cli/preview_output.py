"""A schedule's moments for people: the table and the time-zone notes under it.

``coven preview`` and ``coven explain`` print moments the same way, from here.
"""

from __future__ import annotations

from babel.numbers import format_decimal

from coven_core.cli.output import print_table
from coven_core.cli.times import wall_text
from coven_core.notation.i18n import _, user_locale
from coven_core.notation.limits import MOST_LISTED
from coven_core.notation.utc import utc_text
from coven_core.schedule.exclusions import EXCLUDED_DATE
from coven_core.tz.binding import BoundTime, LocalTimeKind
from coven_core.tz.notes import format_offset
from coven_core.views.preview import Preview


def print_preview(result: Preview) -> None:
    locale = user_locale()
    print(f"{result.timetable.spec}  ·  {result.timetable.zone_key}  ·  tzdb {result.tzdb}")
    headers = [_("Local time", locale), _("Offset", locale), "UTC", _("Status", locale)]
    rows = [_row(result, moment, locale) for moment in result.moments]
    print_table(headers, rows)
    for moment in result.moments:
        text = result.note(moment, locale)
        if text:
            print(f"  • {text}")
    if not result.moments:
        print(_("No occurrences in this range.", locale))
    if result.capped:
        print(
            _(
                "Only the first {count} moments of this range are listed: give --from a later "
                "moment to see more.",
                locale,
            ).format(count=format_decimal(MOST_LISTED, locale=locale))
        )
    ruled = result.ruled
    if ruled is not None:  # the next moment a clock change decides, past the listed ones
        print(_("Next moment a clock change decides:", locale))
        print_table(headers, [_row(result, ruled, locale)])
        print(f"  • {result.note(ruled, locale)}")


def _row(result: Preview, moment: BoundTime, locale: str) -> list[str]:
    marker = "" if moment.kind is LocalTimeKind.REGULAR else " *"
    status = _status(result.skip_reason(moment), locale)
    wall = wall_text(moment.local, locale)
    return [wall + marker, "UTC" + format_offset(moment.offset), utc_text(moment.utc), status]


def _status(reason: str | None, locale: str) -> str:
    if reason is None:
        return _("planned", locale)
    if reason == EXCLUDED_DATE:
        return _("skipped (excluded date)", locale)
    return _("skipped", locale)
