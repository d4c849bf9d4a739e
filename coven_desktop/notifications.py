"""Desktop notifications for what a person should know about — a run that failed, a routine
quarantined, a run that needs a decision, a run far past its usual time — rate-limited so a
storm cannot flood the desktop."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from coven_core.events import Event, EventKind
from coven_core.queries import _, describe_overrun, user_locale

#: At most this many notifications per window; the rest are summed up in one.
BURST, WINDOW_SECONDS = 3, 60.0


class Notifications:
    def __init__(self, show: Callable[[str, str], None], monotonic: Callable[[], float]) -> None:
        self._show, self._monotonic = show, monotonic
        self._sent: deque[float] = deque()
        self._held = 0
        self.locale = user_locale()

    def consider(self, event: Event) -> None:
        message = self._message(event)
        if message is not None:
            self._offer(*message)

    def _message(self, event: Event) -> tuple[str, str] | None:
        locale = self.locale
        if event.kind is EventKind.QUARANTINED:
            return _("Routine quarantined", locale), str(event.data.get("reason", ""))
        if event.kind is EventKind.OVERRUN:
            data = event.data
            running = describe_overrun(
                data.get("running_seconds"), data.get("usual_seconds"), locale
            )
            return _("A run is taking much longer than usual", locale), (
                f"{data.get('routine', '')}: {running}"
            )
        if event.kind is not EventKind.SETTLED:
            return None
        disposition = event.data.get("disposition")
        if disposition == "recovery_required":
            return _("A run needs your decision", locale), str(event.data.get("reason", ""))
        if disposition in ("failed", "timed_out"):
            return _("A run failed", locale), str(event.data.get("reason", ""))
        return None

    def _offer(self, title: str, body: str) -> None:
        now = self._monotonic()
        while self._sent and now - self._sent[0] > WINDOW_SECONDS:
            self._sent.popleft()
        if len(self._sent) >= BURST:
            self._held += 1
            return
        if self._held:
            body = f"{body}\n" + _("(and {count} more — open Coven)", self.locale).format(
                count=self._held
            )
            self._held = 0
        self._sent.append(now)
        self._show(title, body)
