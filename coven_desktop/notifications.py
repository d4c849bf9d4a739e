"""Desktop notifications a person can act on (DESIGN §12): each names the routine and the
outcome, a click opens what it tells of, a storm is throttled, and each kind can be turned off.

The engine writes every notice (:mod:`coven_core.views.notices`, read on the operator thread);
this module decides when to show one, remembers what a click on it opens, and keeps which
kinds a person turned off. After a wake or a start after downtime it shows one summary of what
was missed (:class:`WakeWatch` says when).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal

from coven_core import queries
from coven_core.events import Event, EventKind
from coven_core.queries import Notice, NoticeKind, _
from coven_desktop.preferences import Preferences

if TYPE_CHECKING:
    from coven_core.engine import Engine

T = TypeVar("T")
Read = Callable[[Callable[["Engine"], T]], Awaitable[T]]

#: The events a notice may tell of; the others are not worth a trip to the operator thread.
WORTH_A_NOTICE = frozenset({
    EventKind.SETTLED, EventKind.QUARANTINED, EventKind.ROUTINE_BROKEN, EventKind.OVERRUN,
    EventKind.STOPPED,
})  # fmt: skip

#: What a click on a notice opens when it tells of no single run: a page of the main window.
PAGE_OF = {
    NoticeKind.NEEDS_DECISION: "reconciliation",  # where the decision is made
    NoticeKind.QUARANTINED: "quarantine",
    NoticeKind.BROKEN: "routines",  # where it is edited or deleted
    NoticeKind.WAKE: "timeline",  # the sleep band and the missed window, side by side
}

#: Kinds that are off until a person turns them on: both tell of the person's own act (a
#: cancel, a stop), which the window or the menu already answered.
OFF_BY_DEFAULT = frozenset({NoticeKind.CANCELLED, NoticeKind.STOPPED})

#: The kinds a person can turn off (a fold of several is shown whenever its parts are).
CHOOSABLE = tuple(kind for kind in NoticeKind if kind is not NoticeKind.FOLDED)

#: Held notices are offered again this often (the throttle, the engine's, knows its window).
HELD_RETRY_MS = 10_000

#: When notices were shown, the newest this many: more than any throttle's burst counts.
KEEP_SHOWN = 100

_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Shown:
    """A notice on the desktop, and what a click on it opens: a run, else a page, else the
    main window as it was."""

    title: str
    body: str
    occurrence_id: str | None = None
    page: str | None = None
    warning: bool = False  # something went wrong or waits for a person: not for information


class NoticeSettings:
    """Which kinds of notice are on, kept with the app's preferences (``desktop.ini``)."""

    def __init__(self, data_dir: Path) -> None:
        self._preferences = Preferences(data_dir)

    @property
    def path(self) -> Path:
        return self._preferences.path

    def is_on(self, kind: NoticeKind) -> bool:
        default = kind not in OFF_BY_DEFAULT
        return bool(self._preferences.value(_key(kind), default, kind=bool))

    def set_on(self, kind: NoticeKind, on: bool) -> None:
        self._preferences.set(_key(kind), on)

    @property
    def off(self) -> frozenset[NoticeKind]:
        return frozenset(kind for kind in CHOOSABLE if not self.is_on(kind))


def _key(kind: NoticeKind) -> str:
    return f"notifications/{kind.value}"


class WakeWatch:
    """When to summarise a wake (or a start after downtime): once the catch-up has begun.

    A ``slept`` or ``downtime`` event opens a watch; the missed windows and the catch-up
    claims come in the same pass, and a catch-up run's start a little later. The summary is
    due when every run claimed since has started or ended (so it can say when the latest
    ran), and only if something was missed: a wake that missed nothing is not news.
    """

    def __init__(self) -> None:
        self._since: int | None = None  # the last event before the wake
        self._missed = False
        self._starting: set[str] = set()  # claimed since, not yet started

    def see(self, events: Iterable[Event]) -> int | None:
        """Follow ``events``; the sequence number to summarise from, when a summary is due."""
        for event in events:
            self._follow(event)
        if self._since is None or self._starting:
            return None
        since, missed, self._since = self._since, self._missed, None
        return since if missed else None

    def _follow(self, event: Event) -> None:
        if event.kind in (EventKind.SLEPT, EventKind.DOWNTIME):
            if self._since is None:
                self._since, self._missed = event.seq - 1, False
        elif self._since is None or event.occurrence_id is None:
            return
        elif event.kind is EventKind.SKIPPED and event.data.get("reason") == "missed":
            self._missed = True
        elif event.kind is EventKind.CLAIMED:
            self._starting.add(event.occurrence_id)
        elif event.kind in (EventKind.STARTED, EventKind.SETTLED):
            self._starting.discard(event.occurrence_id)


#: The notices about something that went wrong or waits for a person, shown as a warning:
#: the others (a cancel a person asked for, a run taking long, what was missed while
#: asleep, a fold of several) are information.
WARNING_KINDS = frozenset({
    NoticeKind.FAILED, NoticeKind.TIMED_OUT, NoticeKind.NEEDS_DECISION,
    NoticeKind.QUARANTINED, NoticeKind.BROKEN, NoticeKind.STOPPED,
})  # fmt: skip


class Notifications(QObject):
    """Turns engine events into notices and shows them through ``show(title, body,
    warning)``, throttled; :meth:`clicked` opens what the last one shown tells of
    (:attr:`opened`)."""

    opened = Signal(object)  # the Shown a person clicked

    def __init__(
        self,
        show: Callable[[str, str, bool], None],
        read: Read[Any],
        monotonic: Callable[[], float],
        settings: NoticeSettings,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._show, self._read, self._monotonic = show, read, monotonic
        self.settings = settings
        self.locale = queries.user_locale()
        self.wake = WakeWatch()
        self.last: Shown | None = None  # what a click opens: the newest notice shown
        self._shown_at: list[datetime] = []
        self._held: list[tuple[Notice, str | None]] = []
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.timeout.connect(lambda: self.offer([]))

    # -- from engine events -----------------------------------------------------------------
    async def consider(self, events: Sequence[Event]) -> None:
        """Read the notices ``events`` are worth (and a wake summary, when one is due) on the
        operator thread, then offer them."""
        worth = [event for event in events if event.kind in WORTH_A_NOTICE]
        since = self.wake.see(events)
        if not worth and since is None:
            return
        locale = self.locale

        def told(engine: Engine) -> list[tuple[Notice | None, str | None]]:
            found = [(queries.notice(engine.store, e, locale), e.occurrence_id) for e in worth]
            if since is not None:
                found.append((queries.wake_summary(engine.store, since, locale), None))
            return found

        self.offer([(notice, oid) for notice, oid in await self._read(told) if notice])

    def offer(self, notices: Sequence[tuple[Notice, str | None]]) -> None:
        """Show what the throttle lets through now; hold the rest until the window has room
        (the last shown may fold several into one)."""
        waiting = [*self._held, *notices]
        runs = {id(notice): oid for notice, oid in waiting}  # the throttle passes them on
        now = self._now()
        shown, held = queries.throttle([notice for notice, _ in waiting], self._shown_at, now,
                                       off=self.settings.off)  # fmt: skip
        self._held = [(notice, runs[id(notice)]) for notice in held]
        for notice in shown:
            self._shown_at.append(now)
            self._present(_shown(notice, runs.get(id(notice))))
        del self._shown_at[:-KEEP_SHOWN]
        if self._held:
            self._flush.start(HELD_RETRY_MS)

    def refused(self, message: str) -> None:
        """A person's action was refused and no window is open to say so: say it here (the
        answer to their own click: never throttled, never turned off)."""
        self._present(Shown(_("Coven could not do that"), message, warning=True))

    def clicked(self) -> None:
        """The newest notice was clicked (the tray's message says no more than that)."""
        if self.last is not None:
            self.opened.emit(self.last)

    def stop(self) -> None:
        self._flush.stop()

    # -- helpers ----------------------------------------------------------------------------
    def _present(self, shown: Shown) -> None:
        self.last = shown
        self._show(shown.title, shown.body, shown.warning)

    def _now(self) -> datetime:
        """The throttle's time: monotonic, so a clock step neither floods nor mutes it."""
        return _EPOCH + timedelta(seconds=self._monotonic())


def _shown(notice: Notice, occurrence_id: str | None) -> Shown:
    """A run's notice opens that run; the others open their page (a fold: the window)."""
    page = PAGE_OF.get(notice.kind)
    run = occurrence_id if page is None and notice.kind is not NoticeKind.FOLDED else None
    return Shown(notice.title, notice.body, run, page, notice.kind in WARNING_KINDS)
