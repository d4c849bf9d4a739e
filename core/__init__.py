"""Coven's scheduler engine (import name ``coven_core``).

Plain Python: this package never imports Qt. The desktop app (``coven_desktop``) and the
``coven`` command line both talk to it through its public API.
"""

__version__ = "0.1.0"
