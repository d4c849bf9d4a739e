"""``coven daemon``: the headless scheduler in the foreground until SIGTERM, SIGINT or SIGHUP."""

from __future__ import annotations

import argparse
from typing import Any

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.engine import add_log_level_option, run_daemon
from coven_core.notation.i18n import _
from coven_core.system import logfile


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "daemon",
        help=_("run the scheduler in the foreground"),
        description=_(
            "Run the scheduler in the foreground until SIGTERM, SIGINT or SIGHUP, then "
            "drain. It logs to stderr and to <data dir>/logs/coven.log."
        ),
    )
    add_store_options(parser, json=False)
    add_log_level_option(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with opened_engine(args, create=True) as engine:
        logfile.start(engine.store.data_dir, args.log_level, stderr=True)
        return run_daemon(engine)
