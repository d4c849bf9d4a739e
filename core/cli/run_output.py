"""Runs for people and scripts: the one or two lines ``run-now``, ``probe``, ``cancel`` and
``retry`` print about the run they touched."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from coven_core.cli.output import print_json
from coven_core.notation.i18n import _
from coven_core.operations.runs import RunRef
from coven_core.scheduling import lease

if TYPE_CHECKING:
    from coven_core.engine import Engine


def where_it_stands(ref: RunRef) -> str:
    """``is planned`` / ``is running`` while it lasts, ``ended: failed`` once settled."""
    if ref.disposition is not None:
        return _("ended: {disposition}").format(disposition=ref.disposition)
    return _("is {state}").format(state=ref.state)


def started_run(args: argparse.Namespace, ref: RunRef, *, watched: bool) -> None:
    """A run that ``run-now`` or ``probe`` made (or found again by its key). ``watched``:
    whether a scheduler holds the store now; without one the run only waits, and a person
    should know it and how to start one."""
    if args.json:
        print_json({**ref.to_json(), "key": ref.key, "scheduler_running": watched})
        return
    line = _("Run {run} of {name} {stands} (occurrence {occurrence}).")
    print(line.format(run=ref.run_id, name=repr(args.name), stands=where_it_stands(ref),
                      occurrence=ref.occurrence_id))  # fmt: skip
    print(_("Follow it with: coven history {name}").format(name=args.name))
    if args.command == "run-now" and args.key is None:
        line = _("Repeat it safely (the same run again) with: coven run-now {name} --key {key}")
        print(line.format(name=args.name, key=ref.key))
    if not watched and ref.disposition is None:
        print(f"coven {args.command}: {NO_SCHEDULER}", file=sys.stderr)


NO_SCHEDULER = _(
    "no scheduler is running on this store: start coven-desktop or coven daemon; "
    "the run waits until one does"
)


def scheduler_watches(engine: Engine) -> bool:
    """Whether a scheduler holds this store's lease now (as ``coven status`` decides)."""
    with engine.store.read() as conn:
        return lease.is_alive(lease.current(conn), engine.clock.now_utc())


def cancelled_run(ref: RunRef) -> str:
    """What a cancel did to one run: nothing (it had ended), ended it at once, or asked the
    scheduler to stop it."""
    if ref.already_ended:
        line = _("Run {run} had already {stands}; nothing to cancel.")
        return line.format(run=ref.run_id, stands=where_it_stands(ref))
    if ref.disposition is not None:
        return _("Run {run} {stands}; it had not started.").format(
            run=ref.run_id, stands=where_it_stands(ref)
        )
    return _("Run {run} {stands}; the scheduler has been asked to stop it.").format(
        run=ref.run_id, stands=where_it_stands(ref)
    )


def cancelled_runs(args: argparse.Namespace, refs: Sequence[RunRef]) -> None:
    """``cancel --routine``: every active run of the routine."""
    if args.json:
        print_json({"routine": args.routine, "runs": [ref.to_json() for ref in refs]})
        return
    if not refs:
        print(_("{name} has no active run; nothing to cancel.").format(name=repr(args.routine)))
        return
    for ref in refs:
        print(cancelled_run(ref))
