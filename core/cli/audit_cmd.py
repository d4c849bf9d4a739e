"""``coven audit [--limit N] [--routine NAME]`` and ``coven audit verify``: the operator actions
on record, newest first, and a check of the hash chain that links them (DESIGN §13).

``audit --json`` prints ``{"entries": [ENTRY, ...], "older": N}`` (stable), newest first,
``older`` counting the entries (of ``--routine NAME``, if given) beyond ``--limit``; ENTRY has
``seq``, ``at`` (UTC, ``…Z``), ``who``, ``action``, ``target``, ``why``, ``result``,
``details``, ``prev_hash``, ``hash`` and ``kind`` (``entry``, or ``checkpoint`` for the row
that stands for pruned entries; its ``details`` say how many). ``--routine NAME`` keeps the
entries whose target is NAME: routine actions name the routine, run actions (cancel, retry,
reconcile) the run id.

``audit verify --json`` prints ``{"ok": true, "entries": N, "pruned": N}`` when every link
holds. When one does not, it is refused like any conflict with what is stored: exit status 3,
nothing on stdout, one line on stderr naming the first broken entry.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from coven_core.cli.arguments import add_store_options, count, opened_engine
from coven_core.cli.output import print_json, print_table
from coven_core.errors import Conflict
from coven_core.integrity import audit
from coven_core.integrity.audit import AuditEntry, AuditKind, ChainReport
from coven_core.notation.i18n import N_, _, user_locale
from coven_core.notation.limits import MOST_LISTED
from coven_core.notation.utc import utc_text

DEFAULT_LIMIT = 20
_ROUTINE_HELP = N_("only the entries whose target is NAME (a run's entries name its run id)")


def register(commands: Any) -> None:
    usage = "coven audit [--limit N] [--routine NAME] [--json] | coven audit verify [--json]"
    group = commands.add_parser("audit", help=_("operator actions on record, newest first"),
                                usage=usage)  # fmt: skip
    group.add_argument("--limit", type=count(MOST_LISTED), default=DEFAULT_LIMIT, metavar="N",
                       help=_("the newest N entries (default %(default)s)"))  # fmt: skip
    group.add_argument("--routine", metavar="NAME", help=_(_ROUTINE_HELP))
    add_store_options(group)
    group.set_defaults(run=run_entries)
    actions = group.add_subparsers(dest="action", metavar="ACTION")
    verify = actions.add_parser(
        "verify", help=_("check the hash chain; name the first broken link")
    )
    # SUPPRESS: ``coven audit --json verify`` keeps the --json given before ``verify``.
    verify.add_argument("--json", action="store_true", default=argparse.SUPPRESS)
    verify.add_argument("--data-dir", metavar="DIR", default=argparse.SUPPRESS)
    verify.set_defaults(run=run_verify, command="audit verify")


def run_entries(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine, engine.store.read() as conn:
        found = audit.entries(conn, limit=args.limit, target=args.routine)
        older = audit.count(conn, target=args.routine) - len(found)
    if args.json:
        print_json({"entries": [entry_json(entry) for entry in found], "older": older})
    else:
        _print_entries(found, older)
    return 0


def entry_json(entry: AuditEntry) -> dict[str, Any]:
    return {
        "seq": entry.seq,
        "at": utc_text(entry.at),
        "who": entry.who,
        "action": entry.action,
        "target": entry.target,
        "why": entry.why,
        "result": entry.result,
        "details": entry.details,
        "prev_hash": entry.prev_hash,
        "hash": entry.hash,
        "kind": entry.kind.value,
    }


def _print_entries(found: Sequence[AuditEntry], older: int) -> None:
    locale = user_locale()
    if not found:
        print(_("The audit log has no entries yet.", locale))
        return
    headers = [N_("Seq"), N_("UTC"), N_("Who"), N_("Action"), N_("Target"), N_("Why"), N_("Result")]
    print_table([_(h, locale) for h in headers], [_row(entry, locale) for entry in found])
    if older:
        line = _("… and {older} older (see them with --limit {more})", locale)
        print(line.format(older=older, more=len(found) + older))


def _row(entry: AuditEntry, locale: str) -> list[str]:
    why = _checkpoint_text(entry, locale) if entry.kind is AuditKind.CHECKPOINT else entry.why
    return [str(entry.seq), utc_text(entry.at), entry.who, entry.action, entry.target or "—",
            why or "", entry.result]  # fmt: skip


def _checkpoint_text(entry: AuditEntry, locale: str) -> str:
    line = _("stands for {pruned} pruned entries, {first} → {last}", locale)
    details = entry.details
    return line.format(pruned=details.get("pruned"), first=details.get("from"),
                       last=details.get("through"))  # fmt: skip


def run_verify(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine, engine.store.read() as conn:
        report = audit.verify(conn)
    if not report.ok:
        raise Conflict(_broken_text(report))
    if args.json:
        print_json({"ok": True, "entries": report.entries, "pruned": report.pruned})
    else:
        print(_verified_text(report))
    return 0


def _broken_text(report: ChainReport) -> str:
    line = _("the audit log does not verify at entry {seq}: {problem}")
    return line.format(seq=report.first_broken_seq, problem=report.problem)


def _verified_text(report: ChainReport) -> str:
    if report.entries == 1:
        line = _("the audit log verifies: 1 entry")
    else:
        line = _("the audit log verifies: {entries} entries")
    if report.pruned:
        line += _(" (after a checkpoint for {pruned} pruned)")
    return line.format(entries=report.entries, pruned=report.pruned)
