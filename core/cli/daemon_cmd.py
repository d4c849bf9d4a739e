"""``coven daemon``: the headless scheduler in the foreground until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
from typing import Any

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.engine import run_daemon


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "daemon",
        help="run the scheduler in the foreground",
        description="Run the scheduler in the foreground until SIGTERM or SIGINT, then drain.",
    )
    add_store_options(parser, json=False)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with opened_engine(args, create=True) as engine:
        return run_daemon(engine)
