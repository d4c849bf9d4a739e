"""Coven Desktop: the Qt tray application. It talks to the engine only through its API."""

# The engine and asyncio load before Qt does. Once PySide6 is loaded, its import hook reads
# the source of every module an import statement names, to look for its ``__feature__``
# switch, and ``linecache`` keeps those lines; the modules loaded first are not read
# (bench_idle: "launch to tray ready" and "idle tray app: RSS").
import sys as _sys


def import_asyncio_without_tls() -> None:
    """Import asyncio as on a Python built without ``ssl``, which asyncio supports: it
    imports ``ssl`` for TLS streams, which the app never opens, and loading OpenSSL was the
    largest single part of the idle tray's memory after Qt (bench_idle, "idle tray app:
    RSS"). Afterwards ``ssl`` imports as usual for anything that needs it."""
    if "asyncio" in _sys.modules or "ssl" in _sys.modules:
        return  # too late to choose, or already paid for
    _sys.modules["ssl"] = None  # type: ignore[assignment]  # import ssl: ImportError
    try:
        import asyncio  # noqa: F401  (qasync's loop)
    finally:
        del _sys.modules["ssl"]


import_asyncio_without_tls()

from coven_core import engine as _engine  # noqa: E402
from coven_core import queries as _queries  # noqa: E402, F401  (the tray's views)

_engine.load_scheduler()

from PySide6 import QtCore as _QtCore  # noqa: E402, F401  (installs the hook quieted below)


def _never_switch_features(module: object) -> bool:
    """Whether ``module`` takes part in PySide6's ``__feature__`` switching: none of ours do."""
    return False


def quiet_feature_hook() -> bool:
    """Stop PySide6 reading the source of every module imported after it; whether it could.

    The hook asks whether each new module uses PySide6, by reading its whole source, so that
    a module which says ``from __feature__ import snake_case`` gets its own names. Coven says
    that nowhere, so every module may be one the switching ignores (the hook's own answer
    for a module that does not name PySide6), and none is read: bench_idle's "launch to
    tray ready" and "idle tray app: RSS", and the windows' first show. A PySide6 without
    this hook, or with another shape of it, is left as it is.
    """
    feature = _sys.modules.get("PySide6.support.feature")
    if not callable(getattr(feature, "_mod_uses_pyside", None)):
        return False
    feature._mod_uses_pyside = _never_switch_features  # type: ignore[union-attr]
    return True


quiet_feature_hook()

#: What the app calls itself: Qt's application name and the main window's title. Here, not
#: in ``app_window``, so that starting the tray need not import the window (``bench_idle``).
APP_NAME = "Coven Desktop"
