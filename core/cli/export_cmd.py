"""``coven export systemd|kubernetes --out DIR [ROUTINE ...]``: files for another scheduler,
with what does not carry over and every DST difference of the coming year (DESIGN §15)."""

from __future__ import annotations

import argparse
from datetime import UTC
from pathlib import Path
from typing import Any

from coven_core.cli.arguments import (
    add_store_options,
    in_english_for_json,
    non_empty,
    opened_engine,
)
from coven_core.cli.output import print_json, print_lines
from coven_core.clock import SystemClock
from coven_core.moving.dst_differences import Scheduler
from coven_core.moving.export import export, renderer, stored_routines
from coven_core.notation.i18n import N_, _
from coven_core.notation.timearg import parse_instant


def register(commands: Any) -> None:
    parser = commands.add_parser("export", help=_("export routines as systemd units or CronJobs"))
    targets = parser.add_subparsers(dest="target", metavar="TARGET", required=True)
    summaries = (("systemd", N_("a .service and .timer per routine")),
                 ("kubernetes", N_("a batch/v1 CronJob per routine (JSON)")))  # fmt: skip
    for target, summary in summaries:
        sub = targets.add_parser(target, help=_(summary))
        sub.add_argument("routines", nargs="*", metavar="ROUTINE", help=_("default: every routine"))
        sub.add_argument("--out", required=True, type=Path, metavar="DIR")
        sub.add_argument(
            "--from",
            dest="start",
            metavar="T",
            help=_("start of the year the DST report covers (default: now)"),
        )
        if target == "kubernetes":
            sub.add_argument(
                "--image",
                required=True,
                type=non_empty,
                metavar="IMAGE",
                help=_("the image that has the routines' commands"),
            )
        add_store_options(sub)
        sub.set_defaults(run=run, command=f"export {target}")


def run(args: argparse.Namespace) -> int:
    start = parse_instant(args.start, UTC, "--from") if args.start else SystemClock().now_utc()
    target = Scheduler(args.target)
    with opened_engine(args) as engine:
        routines = stored_routines(engine.store, args.routines)
    with in_english_for_json(args):
        result = export(target, routines, renderer(target, getattr(args, "image", None)), start)
    result.write(args.out)
    if args.json:
        print_json(result.to_json())
    else:
        print_lines(result.lines(args.out))
    return 0
