"""``coven quarantine NAME [--reason TEXT]``, ``coven release NAME [--reason TEXT]`` and
``coven probe NAME``: the circuit breaker by hand (DESIGN §6)."""

from __future__ import annotations

import argparse
from typing import Any

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.cli.output import print_json
from coven_core.cli.run_output import scheduler_watches, started_run
from coven_core.notation.i18n import _, ngettext
from coven_core.queries import show


def register(commands: Any) -> None:
    quarantine = _named_parser(commands, "quarantine", _("stop a routine planning until released"))
    quarantine.add_argument("--reason", metavar="TEXT", help=_("why (shown in show and explain)"))
    quarantine.set_defaults(run=run_quarantine)
    release = _named_parser(commands, "release", _("let a quarantined routine plan again"))
    release.add_argument("--reason", metavar="TEXT", help=_("why (recorded and audited)"))
    release.set_defaults(run=run_release)
    probe = _named_parser(commands, "probe", _("one attempt now of a quarantined routine"))
    probe.set_defaults(run=run_probe)


def _named_parser(commands: Any, verb: str, summary: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(verb, help=summary)
    parser.add_argument("name", metavar="NAME", help=_("the routine"))
    add_store_options(parser)
    return parser


def run_quarantine(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        engine.operator.quarantine(args.name, args.reason)
        routine = show(engine.store, args.name).routine
    document = {"routine": args.name, "state": routine.state.value, "reason": routine.state_reason}
    if args.json:
        print_json(document)
        return 0
    line = _("Quarantined {name} ({reason}); it plans nothing until released.")
    print(line.format(name=repr(args.name), reason=routine.state_reason))
    print(_("Try one attempt with: coven probe {name}").format(name=args.name))
    return 0


def run_release(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        skipped = engine.operator.release(args.name, args.reason)
    if args.json:
        print_json({"routine": args.name, "state": "active", "skipped": skipped})
        return 0
    line = ngettext(
        "Released {name}; {skipped} moment passed while quarantined, recorded as skipped.",
        "Released {name}; {skipped} moments passed while quarantined, recorded as skipped.",
        skipped,
    )
    print(line.format(name=repr(args.name), skipped=skipped))
    return 0


def run_probe(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        ref = engine.operator.probe(args.name)
        watched = scheduler_watches(engine)
    started_run(args, ref, watched=watched)
    return 0
