"""``coven import crontab|systemd|launchd``: a dry run of what would be created, or
``--apply`` to create it through the operator (DESIGN §15)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC
from pathlib import Path
from typing import Any

from coven_core.cli.arguments import add_store_options, in_english_for_json, opened_engine
from coven_core.cli.output import print_json, print_lines
from coven_core.clock import SystemClock
from coven_core.errors import ValidationError
from coven_core.moving.dst_differences import Scheduler
from coven_core.moving.plan import ImportPlan, apply_plan, import_preview
from coven_core.notation.i18n import _
from coven_core.notation.timearg import parse_instant


def register(commands: Any) -> None:
    parser = commands.add_parser("import", help=_("import jobs from crontab, systemd or launchd"))
    sources = parser.add_subparsers(dest="origin", metavar="SOURCE", required=True)
    _source(sources, "crontab", _("a user crontab (FILE, or - for standard input)"), "FILE")
    _source(sources, "systemd", _("a .timer and the .service beside it"), "UNIT.timer")
    _source(sources, "launchd", _("a launchd job's .plist"), "FILE.plist")


def _source(sources: Any, name: str, summary: str, metavar: str) -> None:
    parser = sources.add_parser(name, help=summary)
    parser.add_argument("path", metavar=metavar, nargs="?" if name == "crontab" else None)
    parser.add_argument(
        "--tz",
        default="local",
        metavar="ZONE",
        help=_("the zone the source runs in (default: this machine's)"),
    )
    parser.add_argument(
        "--from",
        dest="start",
        metavar="T",
        help=_("start of the year the DST report covers (default: now)"),
    )
    parser.add_argument("--apply", action="store_true", help=_("create the routines"))
    add_store_options(parser)
    parser.set_defaults(run=run, command=f"import {name}")


def run(args: argparse.Namespace) -> int:
    origin = _ORIGINS[args.origin]
    source = _standard_input() if args.path in (None, "-") else Path(args.path)
    start = parse_instant(args.start, UTC, "--from") if args.start else SystemClock().now_utc()
    with in_english_for_json(args):
        plan = import_preview(origin, source, args.tz, start)
    if args.apply:  # creates routines: like routine add, it may make the store
        with opened_engine(args, create=True) as engine:
            apply_plan(plan, engine.operator)
    _report(plan, args)
    return 0


def _standard_input() -> str:
    try:
        return sys.stdin.read()
    except (OSError, UnicodeDecodeError) as error:  # not text: say so, in one line
        raise ValidationError(
            _("cannot read standard input: {error}").format(error=error)
        ) from None


def _report(plan: ImportPlan, args: argparse.Namespace) -> None:
    if args.json:
        print_json(plan.to_json(applied=args.apply))
    else:
        print_lines(plan.lines(applied=args.apply))


_ORIGINS = {"crontab": Scheduler.CRON, "systemd": Scheduler.SYSTEMD, "launchd": Scheduler.LAUNCHD}
