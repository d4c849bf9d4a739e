"""``coven reconcile RUN_ID --as succeeded|failed|retry --reason TEXT``: a person decides what
happened to a run whose outcome the machine cannot know (DESIGN §5, §10).

``--verified-no-side-effect`` is required with ``--as retry`` (and refused with the others);
``--evidence DIGEST`` (the full ``evidence_digest`` from ``coven attention --json``) has the
decision refused, exit status 3, if the evidence changed since it was shown. Whatever the
decision, the routine stays paused until a person resumes it.

``--json`` prints the decision (stable): ``run_id``, ``outcome``, ``reason``,
``evidence_digest`` (of the evidence the decision was recorded with), ``routine`` and
``routine_state`` (``paused``).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.cli.attention_output import DIGEST_SHOWN
from coven_core.cli.output import print_json
from coven_core.errors import ValidationError
from coven_core.notation.i18n import N_, _
from coven_core.operations.reconcile import Decision, Outcome

_DIGEST = re.compile(r"[0-9a-f]{64}")
_AS_HELP = N_("what happened, as far as you can tell (retry: give it a new attempt)")
_EVIDENCE_HELP = N_("the full evidence digest you decided on (coven attention --json)")
_VERIFIED_HELP = N_("you checked that the run had no side effect (required with --as retry)")


def register(commands: Any) -> None:
    parser = commands.add_parser("reconcile", help=_("decide what happened to a run"))
    parser.add_argument("run_id", metavar="RUN_ID", help=_("a run awaiting a decision"))
    parser.add_argument("--as", dest="outcome", required=True, help=_(_AS_HELP),
                        choices=[outcome.value for outcome in Outcome])  # fmt: skip
    parser.add_argument("--reason", required=True, metavar="TEXT", help=_("why (required)"))
    parser.add_argument("--verified-no-side-effect", action="store_true", help=_(_VERIFIED_HELP))
    parser.add_argument(
        "--evidence", type=evidence_digest, metavar="DIGEST", help=_(_EVIDENCE_HELP)
    )
    add_store_options(parser)
    parser.set_defaults(run=run)


def evidence_digest(text: str) -> str:
    """The 64 hex digits in full: the 12 ``coven attention`` shows are not enough to check."""
    digest = text.strip().lower()
    if not _DIGEST.fullmatch(digest):
        raise argparse.ArgumentTypeError(
            _(
                "{text!r} is not a full evidence digest (64 hex digits, from coven attention "
                "--json)"
            ).format(text=text)
        )
    return digest


def run(args: argparse.Namespace) -> int:
    outcome = Outcome(args.outcome)
    if args.verified_no_side_effect and outcome is not Outcome.RETRY:
        raise ValidationError("--verified-no-side-effect goes only with --as retry")
    with opened_engine(args) as engine:
        decision = engine.operator.reconcile(
            args.run_id, outcome, args.reason,
            verified_no_side_effect=args.verified_no_side_effect, seen_digest=args.evidence,
        )  # fmt: skip
    if args.json:
        print_json(decision.to_json())
    else:
        _print_readable(decision)
    return 0


def _print_readable(decision: Decision) -> None:
    if decision.outcome is Outcome.RETRY:
        line = _("Run {run} will get a new attempt: {reason} (evidence {digest}).")
    else:
        line = _("Run {run} reconciled as {outcome}: {reason} (evidence {digest}).")
    digest = decision.evidence_digest[:DIGEST_SHOWN]
    print(line.format(run=decision.run_id, outcome=decision.outcome.value,
                      reason=decision.reason, digest=digest))  # fmt: skip
    if decision.routine_state == "paused":
        paused = _(
            "The routine {name} stays paused: resume it with coven resume {name} when ready."
        )
        print(paused.format(name=decision.routine))
    else:
        print(_("The routine {name} is {state}.").format(name=decision.routine,
                                                         state=decision.routine_state))  # fmt: skip
