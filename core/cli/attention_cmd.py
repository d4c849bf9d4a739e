"""``coven attention``: everything that needs a person, with the evidence to decide on it.

``--json`` prints ``{"items": [ITEM, ...]}``, each ITEM as
:meth:`coven_core.views.attention.Item.to_json` gives it (stable):

- ``kind``: ``recovery_required`` (the outcome is unknown: decide with ``coven reconcile``),
  ``stuck_cancel`` (a cancel was not acknowledged in time), ``delivery_failing`` or
  ``overrun`` (still running far past the routine's usual time; never stopped for it);
- ``run_id``, ``occurrence_id``, ``routine``, ``routine_id``, ``scheduled_utc``,
  ``disposition``, ``reason``, ``delivery_error``, ``running_seconds`` and
  ``usual_seconds`` (an overrun's; null otherwise);
- ``attempts``, oldest first: ``number``, ``attempt_id``, ``state``, ``failure_class``,
  ``message``, ``claimed_at``, ``started_at``, ``exited_at``, ``runner_pid``, ``runner_alive``,
  ``command_pid``, ``command_alive`` (alive: that pid runs *and* its start time matches),
  ``cancel_requested_at``, ``journal`` (the runner's records, each with ``event`` and ``at``),
  ``journal_problems``, ``stdout_tail``, ``stderr_tail``;
- ``tried``: what the engine already did, oldest first, one line each;
- ``evidence_digest``: sha256 of all of the above. ``coven reconcile --evidence DIGEST``
  refuses the decision if the evidence changed since it was shown.

Exit status 0 whether or not anything needs a person: it is a listing.
"""

from __future__ import annotations

import argparse
from typing import Any

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.cli.attention_output import print_items
from coven_core.cli.output import print_json
from coven_core.notation.i18n import _
from coven_core.queries import list_routines
from coven_core.views.attention import attention


def register(commands: Any) -> None:
    parser = commands.add_parser("attention", help=_("what needs a person, with the evidence"))
    add_store_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        items = attention(engine.store, engine.clock.now_utc())
        views = list_routines(engine.store)
    zones = {view.routine.id: view.zone for view in views}
    broken = {view.routine.name: view.broken for view in views if view.broken}
    if args.json:
        print_json(
            {
                "items": [item.to_json() for item in items],
                "broken_routines": [{"name": n, "reason": r} for n, r in broken.items()],
            }
        )
    else:
        print_items(items, zones, broken)
    return 0
