"""``coven preview``: a schedule's moments over a range, without a routine."""

from __future__ import annotations

import argparse
from typing import Any

from babel.dates import format_datetime

from coven_core.cli.output import print_json, print_table
from coven_core.clock import SystemClock
from coven_core.errors import ValidationError
from coven_core.i18n import _, user_locale
from coven_core.preview import Preview, preview, utc_text
from coven_core.schedule.timetable import Timetable
from coven_core.timearg import parse_instant
from coven_core.tz import tzdb
from coven_core.tz.binding import BoundTime, LocalTimeKind
from coven_core.tz.local import resolve_local_zone
from coven_core.tz.notes import format_offset


def register(commands: Any) -> None:
    parser = commands.add_parser("preview", help="show a schedule's next moments (dry run)")
    parser.add_argument("--schedule", required=True, metavar="SPEC")
    parser.add_argument("--tz", required=True, metavar="ZONE", help="UTC, an IANA key or local")
    parser.add_argument("--from", dest="start", metavar="T", help="default: now")
    parser.add_argument("--to", dest="end", metavar="T", help="end of the range (exclusive)")
    parser.add_argument("--start", dest="dtstart", metavar="T", help="RRULE DTSTART / anchor")
    parser.add_argument("--count", type=_positive, metavar="N")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=run)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def resolve_zone_key(text: str) -> str:
    """``local`` becomes the host's proven IANA key; anything else is checked as it is."""
    key = text.strip()
    if key.lower() == "local":
        return resolve_local_zone().key
    tzdb.zone(key)
    return key


def run(args: argparse.Namespace) -> int:
    key = resolve_zone_key(args.tz)
    zone = tzdb.zone(key)
    start = parse_instant(args.start, zone, "--from") if args.start else SystemClock().now_utc()
    end = parse_instant(args.end, zone, "--to") if args.end else None
    if end is not None and end <= start:
        raise ValidationError("--to must be later than --from")
    anchor = parse_instant(args.dtstart, zone, "--start") if args.dtstart else start
    result = preview(Timetable.build(args.schedule, key, anchor), start, end, args.count)
    if args.json:
        print_json(result.to_json())
    else:
        _print_readable(result)
    return 0


def _print_readable(result: Preview) -> None:
    locale = user_locale()
    print(f"{result.timetable.spec}  ·  {result.timetable.zone_key}  ·  tzdb {result.tzdb}")
    headers = [_("Local time", locale), _("Offset", locale), "UTC", _("Status", locale)]
    rows = [_row(moment, locale) for moment in result.moments]
    print_table(headers, rows)
    for moment in result.moments:
        text = result.note(moment, locale)
        if text:
            print(f"  • {text}")
    if not result.moments:
        print(_("No occurrences in this range.", locale))


def _row(moment: BoundTime, locale: str) -> list[str]:
    # A naive datetime is formatted as the wall time it holds (Babel reads it as UTC and we
    # pass no zone to convert to), which is exactly the local time we mean.
    wall = format_datetime(moment.local, format="medium", locale=locale)
    marker = "" if moment.kind is LocalTimeKind.REGULAR else " *"
    status = _("skipped", locale) if moment.skipped else _("planned", locale)
    return [wall + marker, "UTC" + format_offset(moment.offset), utc_text(moment.utc), status]
