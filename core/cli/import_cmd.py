"""``coven import crontab|systemd|launchd``: a dry run of what would be created, or
``--apply`` to create it through the operator (DESIGN §15)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, timedelta
from pathlib import Path
from typing import Any

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.cli.output import print_json, print_lines
from coven_core.clock import SystemClock
from coven_core.errors import ValidationError
from coven_core.moving.dst_differences import Scheduler
from coven_core.moving.plan import Found, ImportPlan, NotImported, apply_plan, build_plan
from coven_core.notation.timearg import parse_instant
from coven_core.queries import list_routines

#: "the coming year" of the DST report
YEAR = timedelta(days=365)
_Reader = Callable[[Path | None, str], tuple[list[Found], list[NotImported]]]


def register(commands: Any) -> None:
    parser = commands.add_parser("import", help="import jobs from crontab, systemd or launchd")
    sources = parser.add_subparsers(dest="origin", metavar="SOURCE", required=True)
    _source(sources, "crontab", "a user crontab (FILE, or - for standard input)", "FILE")
    _source(sources, "systemd", "a .timer and the .service beside it", "UNIT.timer")
    _source(sources, "launchd", "a launchd job's .plist", "FILE.plist")


def _source(sources: Any, name: str, summary: str, metavar: str) -> None:
    parser = sources.add_parser(name, help=summary)
    parser.add_argument("path", metavar=metavar, nargs="?" if name == "crontab" else None)
    parser.add_argument("--tz", default="local", metavar="ZONE",
                        help="the zone the source runs in (default: this machine's)")  # fmt: skip
    parser.add_argument("--from", dest="start", metavar="T",
                        help="start of the year the DST report covers (default: now)")  # fmt: skip
    parser.add_argument("--apply", action="store_true", help="create the routines")
    add_store_options(parser)
    parser.set_defaults(run=run, command=f"import {name}")


def run(args: argparse.Namespace) -> int:
    origin = _ORIGINS[args.origin]
    found, refused = _READERS[origin](_path(args.path), args.tz)
    start = parse_instant(args.start, UTC, "--from") if args.start else SystemClock().now_utc()
    plan = build_plan(origin, found, refused, start, start + YEAR)
    if args.apply:  # creates routines: like routine add, it may make the store
        with opened_engine(args, create=True) as engine:
            existing = [view.routine.name for view in list_routines(engine.store)]
            apply_plan(plan, engine.operator, existing)
    _report(plan, args)
    return 0


def _path(text: str | None) -> Path | None:
    if text in (None, "-"):
        return None
    path = Path(text)
    if not path.is_file():
        raise ValidationError(f"{text!r} is not a readable file")
    return path


def _report(plan: ImportPlan, args: argparse.Namespace) -> None:
    if args.json:
        print_json(plan.to_json(applied=args.apply))
    else:
        print_lines(plan.lines(applied=args.apply))


def _crontab(path: Path | None, zone: str) -> tuple[list[Found], list[NotImported]]:
    from coven_core.moving.crontab import read_crontab

    try:
        text = sys.stdin.read() if path is None else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:  # unreadable, or not text: say which
        raise ValidationError(f"cannot read {_shown(path)}: {error}") from None
    return read_crontab(text, zone)


def _shown(path: Path | None) -> str:
    return "standard input" if path is None else repr(str(path))


def _timer(path: Path | None, zone: str) -> tuple[list[Found], list[NotImported]]:
    from coven_core.moving.systemd_timer import read_timer

    assert path is not None
    return read_timer(path, zone)


def _plist(path: Path | None, zone: str) -> tuple[list[Found], list[NotImported]]:
    from coven_core.moving.launchd import read_plist

    assert path is not None
    return read_plist(path, zone)


_ORIGINS = {"crontab": Scheduler.CRON, "systemd": Scheduler.SYSTEMD, "launchd": Scheduler.LAUNCHD}
_READERS: dict[Scheduler, _Reader] = {
    Scheduler.CRON: _crontab,
    Scheduler.SYSTEMD: _timer,
    Scheduler.LAUNCHD: _plist,
}
