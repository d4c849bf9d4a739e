"""The tray's one sentence: what needs looking at, and what runs next (issue #21).

``1 failed · 1 quarantined · 2 running; next: backup at 2:30 AM``. Built in the engine from
the :class:`~coven_core.views.overview.Overview` so every front end says the same thing;
times through Babel in the person's locale and zone, every phrase through gettext.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from babel.dates import format_date, format_time

from coven_core.notation.i18n import N_, _
from coven_core.views.overview import Counts, Overview, TrayState

#: The tray state in words, for a tooltip that has nothing to count.
STATE_WORDS = {
    TrayState.IDLE: N_("Idle"),
    TrayState.RUNNING: N_("Running"),
    TrayState.ATTENTION: N_("Needs attention"),
    TrayState.PAUSED: N_("Paused"),
    TrayState.ERROR: N_("Error"),
}

#: Each count's phrase, in the order of the tray's priority.
_COUNTED = (
    ("attention", N_("{count} to decide")),
    ("failed_unseen", N_("{count} failed")),
    ("quarantined", N_("{count} quarantined")),
    ("broken", N_("{count} broken")),
    ("running", N_("{count} running")),
)


def tooltip(overview: Overview, now: datetime, locale: str, zone: tzinfo | None = None) -> str:
    """The counts that are not zero (else the state in a word), then the next run; ``zone``
    is the person's (None: the host's)."""
    return f"{counted(overview, locale)}; {next_words(overview, now, locale, zone)}"


def state_word(state: TrayState, locale: str | None = None) -> str:
    """The tray state in a word: "Needs attention"."""
    return _(STATE_WORDS[state], locale)


def counted(overview: Overview, locale: str) -> str:
    parts = [_(text, locale).format(count=n) for n, text in _nonzero(overview.counts)]
    if overview.paused_all:
        parts.append(_("all scheduling paused", locale))
    return " · ".join(parts) or state_word(overview.state, locale)


def _nonzero(counts: Counts) -> list[tuple[int, str]]:
    return [(getattr(counts, name), text) for name, text in _COUNTED if getattr(counts, name)]


def next_words(overview: Overview, now: datetime, locale: str, zone: tzinfo | None = None) -> str:
    """``next: backup at 2:30 AM`` (today), ``… tomorrow at 2:30 AM``, ``… on Dec 5, 2026
    at 2:30 AM``; nothing while all scheduling is paused (``overview.next_run`` is None)."""
    if overview.next_run is None:
        return _("nothing scheduled", locale)
    name, at = overview.next_run
    moment = when(at, now, locale, zone)
    return _("next: {routine} {when}", locale).format(routine=name, when=moment)


def when(at: datetime, now: datetime, locale: str, zone: tzinfo | None = None) -> str:
    """An instant as a person reads it near now: ``at 2:30 AM``, ``tomorrow at 2:30 AM``."""
    local_at, local_now = at.astimezone(zone), now.astimezone(zone)
    time = format_time(local_at, format="short", locale=locale)
    days = (local_at.date() - local_now.date()).days
    if days == 0:
        return _("at {time}", locale).format(time=time)
    if days == 1:
        return _("tomorrow at {time}", locale).format(time=time)
    day = format_date(local_at, format="medium", locale=locale)
    return _("on {day} at {time}", locale).format(day=day, time=time)
