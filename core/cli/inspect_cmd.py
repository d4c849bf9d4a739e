"""``coven list --state STATE`` and ``coven inspect OCCURRENCE_ID|RUN_ID``: what is where, and
one occurrence in full (DESIGN §10). Tokens are shown only as short fingerprints (§13).

``list --state`` accepts every state its rows show: ``planned`` (every occurrence not yet
claimed, its time come or not), ``claimed``, ``running``, ``recovery_required``,
``quarantined`` and ``paused`` — and ``due``, the planned ones whose time has come.

``list --json`` prints ``{"state": STATE, "items": [...]}`` (stable). For ``planned``,
``due``, ``claimed``, ``running`` and ``recovery_required`` the items are occurrences:
``occurrence_id``, ``run_id``, ``routine``, ``kind``, ``utc``, ``state``, ``disposition``,
``reason``. For ``quarantined`` and ``paused`` they are routines: ``routine_id``,
``routine``, ``state``, ``reason``, ``since``, ``consecutive_failures``.

``inspect --json`` prints :func:`coven_core.views.inspection.inspect` as it is: ``occurrence`` (the
stored row), ``attempts`` (oldest first; ``generation`` is the fence), ``delivery`` (or null),
``decisions`` (reconciliations: ``outcome``, ``reason``, ``decided_by``, ``decided_at``,
``evidence_digest``) and ``lease`` (``holder``, ``token`` fingerprint, ``generation``,
``expires_at``; null if no scheduler ever ran).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.cli.output import print_fields, print_json, print_table
from coven_core.cli.times import instant_in
from coven_core.notation.i18n import N_, _, user_locale
from coven_core.notation.utc import utc_text
from coven_core.views.inspection import ListState, inspect, list_by_state
from coven_core.views.policies import decision_sentence

_ROUTINE_STATES = (ListState.QUARANTINED, ListState.PAUSED)


def register(commands: Any) -> None:
    listing = commands.add_parser("list", help=_("occurrences or routines in one state"))
    listing.add_argument("--state", required=True, choices=[state.value for state in ListState])
    add_store_options(listing)
    listing.set_defaults(run=run_list)
    one = commands.add_parser("inspect", help=_("one occurrence or run in full"))
    one.add_argument("identifier", metavar="OCCURRENCE_ID|RUN_ID")
    add_store_options(one)
    one.set_defaults(run=run_inspect)


def run_list(args: argparse.Namespace) -> int:
    state = ListState(args.state)
    with opened_engine(args) as engine:
        items = list_by_state(engine.store, state, engine.clock.now_utc())
    if args.json:
        print_json({"state": state.value, "items": items})
    else:
        _print_list(state, items)
    return 0


def _print_list(state: ListState, items: Sequence[Mapping[str, Any]]) -> None:
    locale = user_locale()
    if not items:
        print(_("Nothing is {state}.", locale).format(state=state.value))
    elif state in _ROUTINE_STATES:
        headers = [N_("Routine"), N_("State"), N_("Since (UTC)"), N_("Failures"), N_("Reason")]
        print_table([_(h, locale) for h in headers], [_routine_row(item) for item in items])
    else:
        headers = [N_("Occurrence"), N_("Run"), N_("Routine"), N_("UTC"), N_("State"), N_("Reason")]
        print_table([_(h, locale) for h in headers], [_occurrence_row(item) for item in items])


def _occurrence_row(item: Mapping[str, Any]) -> list[str]:
    state = item["disposition"] or item["state"]
    return [item["occurrence_id"], item["run_id"] or "—", item["routine"],
            _utc(item["utc"]), state, item["reason"] or ""]  # fmt: skip


def _routine_row(item: Mapping[str, Any]) -> list[str]:
    return [item["routine"], item["state"], _utc(item["since"]),
            str(item["consecutive_failures"]), item["reason"] or ""]  # fmt: skip


def _utc(text: str | None) -> str:
    instant = instant_in(text) if text else None
    if instant is None:
        return text or "—"
    return utc_text(instant)


def run_inspect(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        found = inspect(engine.store, args.identifier)
    if args.json:
        print_json(found)
    else:
        _print_inspected(found)
    return 0


def _print_inspected(found: Mapping[str, Any]) -> None:
    locale = user_locale()
    occurrence = found["occurrence"]
    why = decision_sentence(occurrence["reason"], occurrence.get("decision"), locale)
    if why is not None:
        print(why, end="\n\n")
    for index, (heading, row) in enumerate(_sections(found, locale)):
        if index:
            print()
        print(f"{heading}:" if row else f"{heading}: " + _("none", locale))
        if row:
            print_fields([(key, _value(value)) for key, value in row.items()], indent="  ")


Section = tuple[str, Mapping[str, Any] | None]


def _sections(found: Mapping[str, Any], locale: str) -> list[Section]:
    return [
        (_("Occurrence", locale), found["occurrence"]),
        *_numbered(_("Attempt", locale), _("Attempts", locale), found["attempts"], "number"),
        (_("Delivery", locale), found["delivery"]),
        *_numbered(_("Decision", locale), _("Decisions", locale), found["decisions"], "id"),
        (_("Lease", locale), found["lease"]),
    ]


def _numbered(one: str, many: str, rows: Sequence[Mapping[str, Any]], key: str) -> list[Section]:
    """``Attempt 1``, ``Attempt 2``, …; ``Attempts: none`` when there are none."""
    if not rows:
        return [(many, None)]
    return [(f"{one} {row[key]}", row) for row in rows]


def _value(value: Any) -> str:
    return "—" if value is None else str(value)
