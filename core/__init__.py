"""Coven's scheduler engine (import name ``coven_core``).

Plain Python: this package never imports Qt. The desktop app (``coven_desktop``) and the
``coven`` command line both talk to it through its public API.
"""

from coven_core.tz.babel_zone import import_babel_dates_safely as _import_babel_dates_safely

__version__ = "0.1.0"

# Before any module imports babel.dates: an odd TZ must never end a command (issue 19).
_import_babel_dates_safely()
