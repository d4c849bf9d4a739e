"""Babel's local zone, read so that no ``TZ`` value can end a command (issue 19)."""

from __future__ import annotations

import os
import sys


def import_babel_dates_safely() -> None:
    """Import ``babel.dates`` whatever ``TZ`` says.

    Babel reads the local zone once, when ``babel.localtime`` is first imported, and raises
    on a ``TZ`` it cannot read (``/etc/passwd``, a 300-character name). Coven shows times in
    each routine's own zone and proves ``local`` itself (``coven_core.tz.local``), so an
    unreadable local zone only means Babel's default is UTC: it must not end a command.
    """
    if "babel.localtime" in sys.modules:
        return
    try:
        import babel.localtime  # noqa: F401
    except Exception:  # anything the zone lookup raises (ValueError, OSError, …)
        _import_with_utc_zone()


def _import_with_utc_zone() -> None:
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    try:
        import babel.localtime  # noqa: F401
    finally:
        if saved is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = saved
