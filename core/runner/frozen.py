"""The runner's entry points inside a frozen bundle, which has no Python interpreter to run
``-m coven_core.runner``: the bundle's own executable, started as
``<executable> --coven-runner ATTEMPT_DIR`` or ``<executable> --coven-runner-server FD``
(see :func:`coven_core.runtime.runner.runner_command`), hands over to the runner here before
it imports anything else.

The bundle changes its environment before any of our code runs: the bootloader points
``LD_LIBRARY_PATH`` at the bundle's libraries and adds ``_PYI_*`` bookkeeping, the runtime
hooks point ``QT_PLUGIN_PATH`` and others into the bundle, and a runner started by the app
inherits all of the app's. A command inheriting that would load the bundle's copies instead of
the system's (a ``/bin/sh`` that finds the bundle's ``libreadline`` fails; a Qt program loads
our plugins), and another copy of the bundle started by a routine would take itself for a
child of this one. So the runner undoes it before it runs anything: its commands get the
environment the person started the app with.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping, Sequence
from pathlib import Path

RUNNER_FLAG = "--coven-runner"
SERVER_FLAG = "--coven-runner-server"

#: Variables PyInstaller's bootloader replaces, with the names it saves the originals under.
_SAVED_BY_BOOTLOADER = {"LD_LIBRARY_PATH": "LD_LIBRARY_PATH_ORIG"}


def frozen_entry(argv: Sequence[str]) -> int | None:
    """Run the runner or the fork server when ``argv`` (without the program) asks for one,
    and return its exit status; None when ``argv`` is for the app itself."""
    if not argv or argv[0] not in (RUNNER_FLAG, SERVER_FLAG):
        return None
    restore_environment(os.environ, bundle_root())
    if argv[0] == RUNNER_FLAG:
        from coven_core.runner.main import main as run_attempt

        return run_attempt(list(argv[1:]))
    from coven_core.runner.server import main as serve

    return serve(list(argv[1:]))


def bundle_root() -> Path:
    """The folder holding all of the bundle: the executables' and ``_internal`` on Linux and
    Windows, ``Contents`` (``MacOS`` and ``Frameworks``) in a macOS app."""
    executables = os.path.dirname(sys.executable)
    internal = getattr(sys, "_MEIPASS", executables)
    return Path(os.path.commonpath([executables, internal]))


def restore_environment(environ: MutableMapping[str, str], bundle: Path) -> None:
    """Undo in ``environ`` what the bundle in directory ``bundle`` did to it: the saved
    originals back, every path into the bundle taken out of every variable (the variable gone
    when nothing else is left), and the bootloader's ``_PYI_*`` bookkeeping removed."""
    for name, saved in _SAVED_BY_BOOTLOADER.items():
        original = environ.pop(saved, None)
        if original:
            environ[name] = original
    for name in list(environ):
        parts = environ[name].split(os.pathsep)
        kept = [part for part in parts if not _inside(part, bundle)]
        if name.startswith("_PYI_") or (parts != kept and not any(kept)):
            del environ[name]
        elif parts != kept:
            environ[name] = os.pathsep.join(kept)


def _inside(value: str, bundle: Path) -> bool:
    return os.path.isabs(value) and Path(value).is_relative_to(bundle)
