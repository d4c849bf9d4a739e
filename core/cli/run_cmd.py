"""``coven run-now NAME [--key KEY]``, ``coven cancel RUN_ID|--routine NAME``,
``coven stop RUN_ID [--reason TEXT]`` and ``coven retry RUN_ID``: the operator's commands on
runs (DESIGN §5, §6, §7, §8).

``run-now`` (and ``probe``) prints the run, and — when no scheduler holds the store's lease,
as ``coven status`` decides — one line on stderr saying so and how to start one: the run
waits until one does. Without ``--key``, Coven makes one and prints it (``Repeat it safely
… --key KEY``) so the call can be repeated without a second run. ``--json`` prints
``run_id``, ``occurrence_id``, ``state``, ``disposition``, ``key`` and
``scheduler_running`` (and nothing on stderr).

``cancel`` is idempotent: a run that has already ended is left as it is, and its outcome is
printed with exit status 0 (``--json`` adds ``already_ended``: true then, false otherwise).

``stop`` ends what still runs of a run — its runner, else its command's process group, as a
cancel does: SIGTERM, then SIGKILL after the routine's stop grace — typically a run awaiting
a decision whose command outlived its runner, which ``coven reconcile`` refuses to decide on
while it lives. It waits for the processes to end (the stop grace and a few seconds more) and
records the outcome on the attempt. Exit status 0 when every process is gone, 3 when the stop
could not be confirmed or nothing runs. ``--json`` prints ``run_id``, ``confirmed`` and
``result`` (what was done, in words).
"""

from __future__ import annotations

import argparse
from typing import Any

from coven_core.cli.arguments import EXIT_CONFLICT, add_store_options, non_empty, opened_engine
from coven_core.cli.output import print_json
from coven_core.cli.run_output import (
    cancelled_run,
    cancelled_runs,
    scheduler_watches,
    started_run,
)
from coven_core.notation.i18n import N_, _
from coven_core.operations.runs import RunRef

_KEY_HELP = N_("an idempotency key: the same key again returns the same run instead of a new one")
_REASON_HELP = N_("why (recorded with the cancel request, shown in history)")


def register(commands: Any) -> None:
    _register_run_now(commands)
    _register_cancel(commands)
    _register_stop(commands)
    _register_retry(commands)


def _register_run_now(commands: Any) -> None:
    parser = commands.add_parser("run-now", help=_("run a routine once, now"))
    parser.add_argument("name", metavar="NAME")
    parser.add_argument("--key", type=non_empty, metavar="KEY", help=_(_KEY_HELP))
    add_store_options(parser)
    parser.set_defaults(run=run_now)


def _register_cancel(commands: Any) -> None:
    parser = commands.add_parser("cancel", help=_("cancel a run, or every active run of a routine"))
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("run_id", nargs="?", metavar="RUN_ID", help=_("the run"))
    target.add_argument("--routine", metavar="NAME", help=_("every active run of this routine"))
    parser.add_argument("--reason", metavar="TEXT", help=_(_REASON_HELP))
    add_store_options(parser)
    parser.set_defaults(run=run_cancel)


def _register_stop(commands: Any) -> None:
    parser = commands.add_parser("stop", help=_("stop a run's live command so you can decide"))
    parser.add_argument("run_id", metavar="RUN_ID", help=_("the run (see: coven attention)"))
    parser.add_argument("--reason", metavar="TEXT", help=_("why (recorded and audited)"))
    add_store_options(parser)
    parser.set_defaults(run=run_stop)


def run_stop(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        stopped = engine.operator.stop(args.run_id, args.reason)
    if args.json:
        print_json(stopped.to_json())
    elif stopped.confirmed:
        print(_("Run {run}: {result}. Decide on it now: coven attention.").format(
            run=stopped.run_id, result=stopped.result))  # fmt: skip
    else:
        print(_("Run {run}: {result}.").format(run=stopped.run_id, result=stopped.result))
    return 0 if stopped.confirmed else EXIT_CONFLICT


def _register_retry(commands: Any) -> None:
    parser = commands.add_parser("retry", help=_("give a failed run a new attempt"))
    parser.add_argument("run_id", metavar="RUN_ID")
    add_store_options(parser)
    parser.set_defaults(run=run_retry)


def run_now(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        ref = engine.operator.run_now(args.name, args.key)
        watched = scheduler_watches(engine)
    started_run(args, ref, watched=watched)
    return 0


def run_cancel(args: argparse.Namespace) -> int:
    if args.routine is not None:
        _cancel_routine(args)
    else:
        _cancel_run(args)
    return 0


def _cancel_run(args: argparse.Namespace) -> None:
    with opened_engine(args) as engine:
        ref = engine.operator.cancel(args.run_id, args.reason)
    if args.json:
        print_json({**ref.to_json(), "already_ended": ref.already_ended})
    else:
        print(cancelled_run(ref))


def _cancel_routine(args: argparse.Namespace) -> None:
    with opened_engine(args) as engine:
        refs = engine.operator.cancel_routine(args.routine, args.reason)
    cancelled_runs(args, refs)


def run_retry(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        ref = engine.operator.retry(args.run_id)
    line = _("Run {run} will get a new attempt; it is planned again.")
    _say(args, ref, line.format(run=ref.run_id))
    return 0


def _say(args: argparse.Namespace, ref: RunRef, line: str) -> None:
    if args.json:
        print_json(ref.to_json())
    else:
        print(line)
