"""What every doctor check shares: findings, the context a check reads, how checks run."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal

import apsw

from coven_core.model import OccurrenceState
from coven_core.notation.i18n import FALLBACK_LOCALE, N_, _, ngettext, user_locale
from coven_core.scheduling.lease import Lease
from coven_core.store.codec import instant_from, instant_text
from coven_core.store.store import Store

Severity = Literal["error", "warning", "info"]
ERROR: Severity = "error"
WARNING: Severity = "warning"
INFO: Severity = "info"

MAX_FINDINGS_PER_CHECK = 50
STORE_ENDS = ("", "-wal", "-shm", "-journal")
LIVE_STATES = (OccurrenceState.CLAIMED.value, OccurrenceState.RUNNING.value)


@dataclass(frozen=True)
class Said:
    """A sentence kept as its template and values: a finding says it in English in its
    ``message`` (what ``--json`` prints) and in a person's language where shown (DESIGN §12).
    A value may be a :class:`Said` itself, a part said in the same language."""

    template: str
    values: Mapping[str, Any] = field(default_factory=dict)
    plural: str | None = None  # with ``count``: ngettext's pair
    count: int = 0

    def text(self, locale: str | None = None) -> str:
        if not self.template:
            return ""
        if self.plural is None:
            template = _(self.template, locale)
        else:
            template = ngettext(self.template, self.plural, self.count, locale)
        return template.format(**{key: _said(value, locale) for key, value in self.values.items()})


def said(template: str, **values: Any) -> Said:
    return Said(template, values)


def counted(singular: str, plural: str, count: int, **values: Any) -> Said:
    """A sentence about ``count`` things, in the plural the language gives it (``{count}``
    is filled in; the extractor knows this function as ngettext's kin: pyproject)."""
    return Said(singular, {"count": count, **values}, plural, count)


def _said(value: Any, locale: str | None) -> Any:
    """A part said in ``locale``: a sentence, or a number's way of writing (a callable:
    ``size_text``'s 1.5 MB is 1,5 MB in German)."""
    if isinstance(value, Said):
        return value.text(locale)
    return value(locale or user_locale()) if callable(value) else value


START_COVEN = Said(N_("Start Coven (or `coven daemon`) to adopt or settle it"))


@dataclass(frozen=True)
class Finding:
    """One thing the doctor found. ``message`` is one line, in English; ``details`` name what
    it is about; :meth:`text` says it in a person's language."""

    check: str
    severity: Severity
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    said: Said | None = field(default=None, compare=False)

    def text(self, locale: str | None = None) -> str:
        return self.message if self.said is None else self.said.text(locale)

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "severity": self.severity,
            "message": self.message,
            "details": self.details,
        }


# --- running the checks -------------------------------------------------------------------


@dataclass(frozen=True)
class Leader:
    """Whether a scheduler watches the store: a lease, not expired (or its holder provably
    alive), whose holder is not gone."""

    lease: Lease | None
    watching: bool
    late: bool  # expired, but its holder is alive: a leader late renewing
    why_not: Said  # when not watching: why, as the end of a sentence


@dataclass(frozen=True)
class Context:
    conn: apsw.Connection
    store: Store
    now: datetime
    leader: Leader
    keep_dirs_for: timedelta
    quick: bool

    @property
    def now_text(self) -> str:
        return instant_text(self.now)


@dataclass(frozen=True)
class Check:
    name: str
    find: Callable[[Context], Iterable[Finding]]
    passed: Said | None = None  # the info line when it finds no error or warning


def run_check(check: Check, context: Context) -> list[Finding]:
    found = [replace(finding, check=check.name) for finding in _guarded(check, context)]
    if check.passed is not None and not any(f.severity != INFO for f in found):
        found.insert(0, replace(finding(INFO, check.passed), check=check.name))
    return _capped(check.name, found)


def _guarded(check: Check, context: Context) -> Iterator[Finding]:
    """A check that cannot read the store says so and lets the others run."""
    try:
        yield from check.find(context)
    except apsw.Error as error:
        yield finding(ERROR, said(N_("the {check} check stopped: SQLite said {error} — the store "
                                    "file may be damaged (see the integrity check)"),
                                 check=check.name, error=one_line(str(error))))  # fmt: skip


def _capped(check: str, found: list[Finding]) -> list[Finding]:
    if len(found) <= MAX_FINDINGS_PER_CHECK:
        return found
    kept, rest = found[:MAX_FINDINGS_PER_CHECK], found[MAX_FINDINGS_PER_CHECK:]
    worst = next((s for s in (ERROR, WARNING) if any(f.severity == s for f in rest)), INFO)
    more = counted(
        "… and {count} more finding like these", "… and {count} more findings like these", len(rest)
    )
    return [*kept, replace(finding(worst, more, more=len(rest)), check=check)]


def finding(severity: Severity, message: str | Said, **details: Any) -> Finding:
    """A finding of the check that yields it (the runner fills in ``check``); a :class:`Said`
    message is said in English here and in a person's language where shown."""
    if isinstance(message, str):  # a text from elsewhere (SQLite's, a refusal's): as it is
        return Finding("", severity, message, details)
    return Finding("", severity, message.text(FALLBACK_LOCALE), details, message)


def iso(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def shown(stored: str | None) -> str:
    """A stored instant as people read it elsewhere in the CLI."""
    return "—" if stored is None else iso(instant_from(stored))


def one_line(text: str) -> str:
    return " ".join(text.split())
