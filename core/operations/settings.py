"""Global settings a person changes with ``coven config`` (DESIGN §6): one row a setting.

Only settings named here exist, each with its default and its reading, so a typo is refused
and a setting never stored reads as its default. ``max-active`` bounds the runs active at
once (DESIGN §11, §14). ``default-timeout`` is the
timeout of every run whose routine has none of its own (``default``, also what a routine
stored before this setting existed means). 24 hours: longer than any routine this scheduler
is meant for — nightly backups, syncs, reports, agent runs — usually needs, short enough that
a hung command is stopped and reported the same day instead of running on unseen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

import apsw

from coven_core.errors import ValidationError
from coven_core.notation.durations import format_timeout, parse_timeout
from coven_core.notation.i18n import N_, _
from coven_core.store.codec import instant_text

DEFAULT_TIMEOUT = "default-timeout"
MAX_ACTIVE = "max-active"


@dataclass(frozen=True)
class Setting:
    name: str
    default: str
    check: Callable[[str], str]  # the canonical text of a value, or a ValidationError
    help: str


def _timeout_value(text: str) -> str:
    timeout = parse_timeout(text)
    if timeout is None:
        raise ValidationError(_("default-timeout is the default itself: give 6h, 1d or none"))
    return format_timeout(timeout)


def _count_value(text: str) -> str:
    try:
        count = int(text.strip())
    except ValueError:
        raise ValidationError(
            _("max-active: {text!r} is not a whole number").format(text=text)
        ) from None
    if count < 1:
        raise ValidationError(_("max-active must be at least 1 (pause scheduling to run nothing)"))
    return str(count)


KNOWN: dict[str, Setting] = {
    DEFAULT_TIMEOUT: Setting(
        DEFAULT_TIMEOUT,
        "1d",
        _timeout_value,
        N_("the timeout of a run whose routine has none of its own (none: no limit)"),
    ),
    MAX_ACTIVE: Setting(
        MAX_ACTIVE,
        "4",
        _count_value,
        N_("how many runs may be active at once, all routines together"),
    ),
}


@dataclass(frozen=True)
class Value:
    name: str
    value: str
    is_default: bool
    changed_at: str | None
    help: str

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "value": self.value, "default": self.is_default,
                "changed_at": self.changed_at, "help": self.help}  # fmt: skip


def _known(name: str) -> Setting:
    setting = KNOWN.get(name)
    if setting is None:
        raise ValidationError(f"no setting {name!r} (known: {', '.join(sorted(KNOWN))})")
    return setting


def current(conn: apsw.Connection) -> list[Value]:
    """Every known setting, as stored or as its default."""
    stored = {name: (value, at) for name, value, at in conn.execute(_ALL)}
    values = []
    for name, setting in sorted(KNOWN.items()):
        value, at = stored.get(name, (setting.default, None))
        values.append(Value(name, value, at is None, at, setting.help))
    return values


_ALL = "SELECT name, value, changed_at FROM settings"


def set_value(conn: apsw.Connection, name: str, value: str, now: datetime) -> Value:
    """Store a setting (checked, in its canonical spelling) inside the caller's transaction."""
    setting = _known(name)
    text = setting.check(value)
    conn.execute(
        "INSERT INTO settings (name, value, changed_at) VALUES (?1, ?2, ?3) "
        "ON CONFLICT (name) DO UPDATE SET value = ?2, changed_at = ?3",
        (name, text, instant_text(now)),
    )
    return Value(name, text, False, instant_text(now), setting.help)


DEFAULT_TIMEOUT_SQL = f"(SELECT value FROM settings WHERE name = '{DEFAULT_TIMEOUT}')"
"""The stored default timeout's text, or NULL: read inside another statement (a claim's)."""


@lru_cache(maxsize=8)  # read for every attempt's claim; the text seldom changes (drain row)
def default_timeout(stored: str | None) -> timedelta:
    """The default timeout from its stored text (:data:`DEFAULT_TIMEOUT_SQL`); NO_TIMEOUT for
    ``none``. A value that no longer reads (hand-edited) counts as the built-in default."""
    for text in (stored, KNOWN[DEFAULT_TIMEOUT].default):
        if text is None:
            continue
        try:
            timeout = parse_timeout(text)
        except ValidationError:
            continue
        if timeout is not None:
            return timeout
    raise AssertionError("the built-in default timeout reads")


MAX_ACTIVE_SQL = f"(SELECT value FROM settings WHERE name = '{MAX_ACTIVE}')"
"""The stored ``max-active`` text, or NULL: read inside another statement (the claim's read)."""


def max_active(stored: str | None, fallback: int) -> int:
    """``max-active`` from its stored text (:data:`MAX_ACTIVE_SQL`), or ``fallback`` (the
    scheduler's built-in limit) when it was never set or no longer reads."""
    try:
        return fallback if stored is None else int(_count_value(stored))
    except ValidationError:
        return fallback
