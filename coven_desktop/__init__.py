"""Coven Desktop: the Qt tray application. It talks to the engine only through its API."""

# The engine and asyncio load before Qt does. Once PySide6 is loaded, its import hook reads
# the source of every module an import statement names, to look for its ``__feature__``
# switch, and ``linecache`` keeps those lines; the modules loaded first are not read
# (bench_idle: "launch to tray ready" and "idle tray app: RSS").
import asyncio as _asyncio  # noqa: F401  (qasync's loop)

from coven_core import engine as _engine
from coven_core import queries as _queries  # noqa: F401  (the tray's views)

_engine.load_scheduler()

#: What the app calls itself: Qt's application name and the main window's title. Here, not
#: in ``app_window``, so that starting the tray need not import the window (``bench_idle``).
APP_NAME = "Coven Desktop"
