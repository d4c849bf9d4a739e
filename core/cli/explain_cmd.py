"""``coven explain NAME``: the routine's state, whether it will run, and its next moments
with every time-zone decision (the same table and notes as ``coven preview``)."""

from __future__ import annotations

import argparse
from typing import Any

from coven_core.cli.arguments import add_store_options, count, opened_engine
from coven_core.cli.output import print_json
from coven_core.cli.preview_output import print_preview
from coven_core.notation.i18n import _
from coven_core.notation.limits import MOST_LISTED
from coven_core.queries import Explanation, explain, usable
from coven_core.views.preview import DEFAULT_COUNT


def register(commands: Any) -> None:
    parser = commands.add_parser("explain", help=_("why a routine will or will not run next"))
    parser.add_argument("name", metavar="NAME")
    parser.add_argument("--count", type=count(MOST_LISTED), default=DEFAULT_COUNT, metavar="N")
    add_store_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        result = explain(engine.store, args.name, engine.clock.now_utc(), args.count)
    if args.json:
        print_json(explanation_json(result))
    else:
        _print_readable(result)
    return 0


def explanation_json(result: Explanation) -> dict[str, Any]:
    view = result.view
    return {
        "routine": view.routine.name,
        "state": view.state,
        "state_reason": view.state_reason,
        "revision": usable(result.view).number,
        "verdict": result.verdict,
        **result.upcoming.to_json(),
    }


def _print_readable(result: Explanation) -> None:
    view = result.view
    print(f"{view.routine.name}  ·  {view.state}  ·  revision {usable(view).number}")
    print(result.verdict)
    print()
    print_preview(result.upcoming)
