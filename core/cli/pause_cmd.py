"""``coven pause NAME|--all`` and ``coven resume NAME|--all``."""

from __future__ import annotations

import argparse
from typing import Any

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.cli.output import print_json
from coven_core.notation.i18n import _, ngettext
from coven_core.operator import Operator


def register(commands: Any) -> None:
    pause = _target_parser(commands, "pause", _("pause a routine, or all scheduling"))
    pause.add_argument("--reason", metavar="TEXT", help=_("why (shown in show, status, history)"))
    pause.set_defaults(run=run_pause)
    resume = _target_parser(commands, "resume", _("resume a routine, or all scheduling"))
    resume.set_defaults(run=run_resume)


def _target_parser(commands: Any, verb: str, summary: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(verb, help=summary)
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("name", nargs="?", metavar="NAME", help=_("the routine"))
    target.add_argument("--all", action="store_true", help=_("all scheduling, every routine"))
    add_store_options(parser)
    return parser


def run_pause(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        _pause(engine.operator, args)
    document = {**_target(args), "state": "paused", "reason": args.reason}
    _say(args, document, _("Paused {what}."))
    return 0


def _pause(operator: Operator, args: argparse.Namespace) -> None:
    if args.all:
        operator.pause_all(args.reason)
    else:
        operator.pause(args.name, args.reason)


def run_resume(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        op = engine.operator
        skipped = op.resume_all() if args.all else op.resume(args.name)
    document = {**_target(args), "state": "active", "skipped": skipped}
    said = ngettext(
        "Resumed {what}; {skipped} missed moment recorded as skipped.",
        "Resumed {what}; {skipped} missed moments recorded as skipped.",
        skipped,
    )
    _say(args, document, said)
    return 0


def _target(args: argparse.Namespace) -> dict[str, Any]:
    return {"scope": "all" if args.all else "routine", "routine": None if args.all else args.name}


def _say(args: argparse.Namespace, document: dict[str, Any], template: str) -> None:
    if args.json:
        print_json(document)
        return
    what = _("all scheduling") if args.all else repr(args.name)
    print(template.format(what=what, skipped=document.get("skipped")))
