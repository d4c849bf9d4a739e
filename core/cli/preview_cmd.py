"""``coven preview``: a schedule's moments over a range, without a routine."""

from __future__ import annotations

import argparse
from typing import Any

from coven_core.cli.arguments import count
from coven_core.cli.output import print_json
from coven_core.cli.preview_output import print_preview
from coven_core.cli.routine_options import except_date
from coven_core.clock import SystemClock
from coven_core.errors import ValidationError
from coven_core.notation.i18n import _
from coven_core.notation.limits import MOST_LISTED
from coven_core.notation.timearg import parse_instant
from coven_core.schedule.exclusions import normalised
from coven_core.schedule.timetable import Timetable
from coven_core.tz import tzdb
from coven_core.tz.local import resolve_zone_key
from coven_core.views.preview import preview


def register(commands: Any) -> None:
    parser = commands.add_parser("preview", help=_("show a schedule's next moments (dry run)"))
    parser.add_argument("--schedule", required=True, metavar="SPEC")
    parser.add_argument("--tz", required=True, metavar="ZONE", help=_("UTC, an IANA key or local"))
    parser.add_argument("--from", dest="start", metavar="T", help=_("default: now"))
    parser.add_argument("--to", dest="end", metavar="T", help=_("end of the range (exclusive)"))
    parser.add_argument("--start", dest="dtstart", metavar="T", help=_("RRULE DTSTART / anchor"))
    parser.add_argument("--count", type=count(MOST_LISTED), metavar="N")
    parser.add_argument("--except", dest="except_dates", action="append", type=except_date,
                        default=[], metavar="YYYY-MM-DD",
                        help=_("a local date whose moments are skipped (repeatable)"))  # fmt: skip
    parser.add_argument("--json", action="store_true", help=_("print one JSON object"))
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    key = resolve_zone_key(args.tz)
    zone = tzdb.zone(key)
    start = parse_instant(args.start, zone, "--from") if args.start else SystemClock().now_utc()
    end = parse_instant(args.end, zone, "--to") if args.end else None
    if end is not None and end <= start:
        raise ValidationError(_("--to must be later than --from"))
    anchor = parse_instant(args.dtstart, zone, "--start") if args.dtstart else start
    table = Timetable.build(args.schedule, key, anchor)
    result = preview(table, start, end, args.count, normalised(d for d in args.except_dates if d))
    if args.json:
        print_json(result.to_json())
    else:
        print_preview(result)
    return 0
