"""The windows of the desktop app (DESIGN §12), one module per window.

Every window is a page of the main window (:class:`coven_desktop.app_window.MainWindow`),
built the first time it is shown, so launching the tray costs nothing for windows nobody
opened. A page module exports ``Page``, a ``QWidget`` subclass constructed as
``Page(desktop)``, where ``desktop`` is the running :class:`coven_desktop.desktop.Desktop`:

* it **reads** through the engine's query API on the operator thread, awaited:
  ``await desktop.service.call(lambda engine: queries.list_routines(engine.store))`` — never
  SQLite, never a blocking call on the GUI thread;
* it **acts** through the operator API: ``desktop.act(lambda engine: engine.operator.pause(n))``
  (refusals arrive on ``desktop.failed``);
* it **refreshes** on the engine's news: ``desktop.overviewChanged`` (after every action and
  every pass with news) and ``desktop.service.eventsArrived`` (the new events) — no timers
  polling the store;
* it may define ``async def reload(self) -> None``, which the main window awaits when the page
  is shown, so tests can ``loop.run_until_complete(page.reload())``;
* a page that loads in tasks of its own may define ``async def settle(self)``, which tests
  and the demo renderer (``python -m coven_desktop.demo``) await; the renderer's extra
  states of a page are listed in :mod:`coven_desktop.demo.windows`.
"""

from __future__ import annotations

from dataclasses import dataclass

from coven_core.queries import N_


@dataclass(frozen=True)
class PageInfo:
    key: str  # stable: used by show_page() and by the demo renderer's file names
    title: str  # untranslated (marked N_); the main window translates it when shown
    module: str  # imported lazily, when the page is first shown


#: The main window's pages, in the order of its side bar.
PAGES: tuple[PageInfo, ...] = (
    PageInfo("welcome", N_("Welcome"), "coven_desktop.windows.welcome"),
    PageInfo("routines", N_("Routines"), "coven_desktop.windows.routines"),
    PageInfo("runs", N_("Runs"), "coven_desktop.windows.runs"),
    PageInfo("timeline", N_("Timeline"), "coven_desktop.windows.timeline"),
    PageInfo("reconciliation", N_("Needs attention"), "coven_desktop.windows.reconciliation"),
    PageInfo("quarantine", N_("Quarantine"), "coven_desktop.windows.quarantine"),
    PageInfo("diagnostics", N_("Diagnostics"), "coven_desktop.windows.diagnostics"),
)


def page_info(key: str) -> PageInfo:
    for info in PAGES:
        if info.key == key:
            return info
    raise KeyError(f"no page {key!r}")
