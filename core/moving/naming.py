"""Routine names for imported jobs: derived from the command, unique, editable later.

The rule: the basename of the command's first word, then the basename of its first argument
that is not an option (``-x``) and has no shell syntax (``<>|&;$``), joined by ``-``;
lowercased, every run of characters other than a–z and 0–9 becomes one ``-``, trimmed to 40
characters. A name used
earlier in the same import gets ``-2``, ``-3`` … in file order. A launchd job keeps its
``Label``. A name that is already a routine in the store is not renamed: ``--apply`` refuses
and creates nothing, so the dry run's names are the names you get.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable

_MAX = 40
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
_SHELL_SYNTAX = frozenset("<>|&;$")


def slug_of_command(command: str) -> str:
    """``/usr/bin/rsync -a ~/docs /mnt`` → ``rsync-docs``."""
    try:
        words = shlex.split(command, comments=False)
    except ValueError:
        words = command.split()
    meaningful = [w for w in words if not w.startswith("-") and not _SHELL_SYNTAX & set(w)]
    parts = [os.path.basename(w.rstrip("/")) or w for w in meaningful[:2]]
    return _slug("-".join(parts)) or "routine"


def _slug(text: str) -> str:
    return _NOT_SLUG.sub("-", text.lower()).strip("-")[:_MAX].rstrip("-")


def unique(wanted: str, taken: Iterable[str]) -> str:
    """``wanted``, or ``wanted-2``, ``wanted-3`` … whichever is not taken yet."""
    used = set(taken)
    if wanted not in used:
        return wanted
    number = 2
    while f"{wanted}-{number}" in used:
        number += 1
    return f"{wanted}-{number}"
