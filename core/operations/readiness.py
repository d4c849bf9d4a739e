"""Whether a routine's command could start now: its executable and working directory exist.

Only a warning when a routine is added or edited: the disk may be mounted, or the program
installed, before the first run — the routine is stored either way. A run whose command
cannot start fails then, classified ``validation`` (DESIGN §6).
"""

from __future__ import annotations

import os
import shutil

from coven_core.model import RevisionSpec


def missing(spec: RevisionSpec) -> list[str]:
    """What the command needs and does not find now, each in one sentence; none for a
    ``--shell`` command (its first word is a script, not a program to look up)."""
    found = [] if spec.shell else _executable(spec)
    if spec.cwd is not None and not os.path.isdir(spec.cwd):
        found.append(f"the working directory {spec.cwd} does not exist now")
    return found


def _executable(spec: RevisionSpec) -> list[str]:
    """argv[0] as the runner will look for it: absolute as it is; with a slash, from the
    working directory (unknown without one: not checked); else on PATH — the routine's own
    ``--env PATH=…`` if it sets one, else this environment's."""
    program = spec.argv[0] if spec.argv else ""
    if not program:
        return []
    if "/" in program:
        if not os.path.isabs(program) and spec.cwd is None:
            return []
        path = os.path.join(spec.cwd or "", program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return []
        return [f"the command {program} does not exist now (or is not executable)"]
    search = dict(spec.env).get("PATH", os.environ.get("PATH", os.defpath))
    if shutil.which(program, path=search) is not None:
        return []
    return [f"the command {program!r} is not found on PATH now"]
