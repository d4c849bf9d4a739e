"""A revision's policies (DESIGN §14) for people and scripts: the fields ``routine show``
prints and ``--json`` carries, and the sentence that tells a policy's decision on a moment.

One place for both, so the CLI, ``inspect``, ``explain`` and the GUI say the same thing.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from coven_core.model import RevisionSpec
from coven_core.notation.i18n import _
from coven_core.schedule.exclusions import dates_text


def policy_json(spec: RevisionSpec) -> dict[str, Any]:
    return {"except_dates": [day.isoformat() for day in spec.except_dates], "shadow": spec.shadow}


def policy_fields(spec: RevisionSpec, locale: str) -> list[tuple[str, str]]:
    """The policies a revision sets, as (label, value) rows; none when it sets none."""
    fields = []
    if spec.shadow:
        fields.append((_("Trial", locale), _("shadow: decided as if live, never started", locale)))
    if spec.except_dates:
        fields.append((_("Except", locale), dates_text(spec.except_dates)))
    return fields


def decision_inputs(stored: str | None) -> dict[str, Any]:
    """The inputs stored with a policy decision (the occurrence's ``decision`` column)."""
    if not stored:
        return {}
    found = json.loads(stored)
    return found if isinstance(found, dict) else {}


def decision_sentence(reason: str | None, stored: str | None, locale: str) -> str | None:
    """What a policy decided on one occurrence and on what, in one sentence; None when no
    policy decided it."""
    inputs = decision_inputs(stored)
    why = _policy_sentence(reason, inputs, locale)
    if inputs.get("would") == "run":
        return _("A trial: it would have run {command}; nothing was started.", locale).format(
            command=shlex.join(inputs.get("command") or [])
        )
    if inputs.get("would") == "skip":
        skipped = _("A trial: it would have been skipped, and nothing was started.", locale)
        return skipped if why is None else f"{skipped} {why}"
    return why


def _policy_sentence(reason: str | None, inputs: dict[str, Any], locale: str) -> str | None:
    if reason == "excluded_date":
        return _("Its date, {date}, is one of the routine's exclusion dates.", locale).format(
            date=inputs.get("date", "?")
        )
    return None
