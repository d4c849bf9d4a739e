"""``coven routine add|list|show|edit|delete``: defining routines through the operator API.

``list`` and ``show`` say what a routine will do: ``state`` is ``paused`` for an active
routine while all scheduling is paused (``state_reason`` "all scheduling is paused";
``paused_all`` says whether it is, for every routine), and ``next_due`` is null while a
routine is not active (paused either way, quarantined, broken) — nothing runs until a
person acts, and the moments that pass meanwhile are skipped.

``add`` and ``edit`` store the routine even when its command's executable (argv[0], looked
up on PATH unless it has a slash; not for ``--shell``) or its working directory does not
exist now, and say so: one line on stderr, or ``warnings`` (a list of sentences, empty when
nothing is missing) in ``--json``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from datetime import datetime
from typing import Any

from coven_core.cli.arguments import CommandTailParser, add_store_options, opened_engine
from coven_core.cli.output import print_json
from coven_core.cli.routine_options import (
    add_spec_options,
    added_spec,
    check_zone,
    spec_changes,
)
from coven_core.cli.routine_output import print_routine, print_routines
from coven_core.clock import SystemClock
from coven_core.engine import Engine
from coven_core.errors import ValidationError
from coven_core.model import RevisionSpec
from coven_core.notation.i18n import _
from coven_core.notation.timearg import parse_instant
from coven_core.operations import readiness
from coven_core.operations.definitions import check_can_run
from coven_core.operations.routine_names import check_name
from coven_core.operator import validated
from coven_core.queries import list_routines, show
from coven_core.schedule.timetable import Timetable
from coven_core.tz import tzdb


def register(commands: Any) -> None:
    group = commands.add_parser("routine", help=_("add, list, show, edit or delete routines"))
    add_store_options(group, json=False)
    actions = group.add_subparsers(
        dest="action", metavar="ACTION", required=True, parser_class=CommandTailParser
    )
    _register_add(actions)
    _simple(actions, "list", _list, _("list the routines (deleted ones are not shown)"))
    _simple(actions, "show", _show, _("show one routine"), name=True)
    _register_edit(actions)
    _simple(actions, "delete", _delete, _("delete a routine (its history is kept)"), name=True)


def _simple(actions: Any, verb: str, run: Any, summary: str, *, name: bool = False) -> None:
    parser = actions.add_parser(verb, help=summary)
    if name:
        parser.add_argument("name", metavar="NAME")
    add_store_options(parser)
    parser.set_defaults(run=run, command=f"routine {verb}")


def _register_add(actions: Any) -> None:
    usage = _(
        "coven routine add NAME (--schedule SPEC --tz ZONE | --after ROUTINE) [options] "
        "-- COMMAND [ARG ...]"
    )
    parser = actions.add_parser("add", help=_("add a routine"), usage=usage, takes_command=True)
    parser.add_argument("name", metavar="NAME")
    add_spec_options(parser)
    parser.add_argument("--start", metavar="T", help=_("RRULE DTSTART / interval anchor"))
    add_store_options(parser)
    parser.set_defaults(run=_add, command="routine add")


def _register_edit(actions: Any) -> None:
    usage = _("coven routine edit NAME [options] [-- COMMAND [ARG ...]]")
    parser = actions.add_parser("edit", help=_("change a routine"), usage=usage, takes_command=True)
    parser.add_argument("name", metavar="NAME")
    add_spec_options(parser)
    add_store_options(parser)
    parser.set_defaults(run=_edit, command="routine edit")


def _add(args: argparse.Namespace) -> int:
    spec = RevisionSpec(**{"argv": (), **added_spec(args)})
    anchor = _checked_anchor(args.name, spec, args.start)
    with opened_engine(args, create=True) as engine:
        engine.operator.add_routine(args.name, spec, anchor)
        return _report(engine, args, _("Added routine {name}."))


def _checked_anchor(name: str, spec: RevisionSpec, start: str | None) -> datetime | None:
    """Everything the store is not needed for is checked before it is opened."""
    check_name(name)
    spec = validated(name, spec)
    zone = tzdb.zone(spec.timezone)
    anchor = parse_instant(start, zone, "--start") if start else None
    now = SystemClock().now_utc()
    check_can_run(Timetable.build(spec.schedule, spec.timezone, anchor or now), now)
    return anchor


def _edit(args: argparse.Namespace) -> int:
    changes = spec_changes(args)
    if not changes:
        raise ValidationError("nothing to change: give an option such as --schedule, or -- COMMAND")
    check_zone(changes)
    with opened_engine(args) as engine:
        engine.operator.edit_routine(args.name, lambda spec: replace(spec, **changes))
        return _report(engine, args, _("Changed routine {name}."))


def _report(engine: Engine, args: argparse.Namespace, done: str) -> int:
    """The routine as stored, and what its command misses now (stored all the same)."""
    view = show(engine.store, args.name)
    warnings = [] if view.revision is None else readiness.missing(view.revision.spec)
    if args.json:
        print_json({**view.to_json(), "warnings": warnings})
        return 0
    print(done.format(name=repr(args.name)))
    print_routine(view)
    if warnings:
        line = _("warning: {missing}; the routine is stored, and its runs fail until it exists")
        print(f"coven {args.command}: " + line.format(missing="; ".join(warnings)), file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        views = list_routines(engine.store)
    if args.json:
        print_json({"routines": [view.to_json() for view in views]})
    else:
        print_routines(views)
    return 0


def _show(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        view = show(engine.store, args.name)
    if args.json:
        print_json(view.to_json())
    else:
        print_routine(view)
    return 0


def _delete(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:  # an unknown name is refused by the operator: audited
        routine_id = engine.operator.delete_routine(args.name)
    if args.json:
        print_json({"id": routine_id, "name": args.name, "state": "deleted"})
    else:
        print(_("Deleted routine {name}; its history is kept.").format(name=repr(args.name)))
    return 0
