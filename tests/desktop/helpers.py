"""Helpers for tests of the real app: add a routine through the operator API, and wait for an
engine event on the bridge's signal (never a fixed wait)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import qasync

from coven_core.events import Event
from coven_core.model import RevisionSpec
from coven_desktop.desktop import Desktop


def add(
    desktop: Desktop, loop: qasync.QEventLoop, name: str, *argv: str, **options: object
) -> None:
    spec = RevisionSpec(schedule="@yearly", timezone="UTC", argv=argv or ("/bin/true",), **options)  # type: ignore[arg-type]
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.add_routine(name, spec)))
    loop.run_until_complete(desktop.refresh())


def wait_for_event(
    desktop: Desktop,
    loop: qasync.QEventLoop,
    predicate: Callable[[Event], bool],
    timeout: float = 20.0,
    *,
    doing: Awaitable[object] | None = None,
) -> Event:
    """Resolve on the bridge's signal (never a fixed wait). ``doing`` runs only once the
    listener is connected: an event that arrives while it runs is not missed."""
    found: asyncio.Future[Event] = loop.create_future()

    def look(events: list[Event]) -> None:
        for event in events:
            if predicate(event) and not found.done():
                found.set_result(event)

    desktop.service.eventsArrived.connect(look)
    try:
        if doing is not None:
            loop.run_until_complete(doing)
        return loop.run_until_complete(asyncio.wait_for(found, timeout))
    finally:
        desktop.service.eventsArrived.disconnect(look)
