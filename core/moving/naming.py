"""Routine names for imported jobs: derived from the command, unique, editable later.

The rule: the basename of the command's first word, then the basename of its first argument
that is not an option (``-x``), has no shell syntax (``<>|&;$``) and is not where a
redirection sends the output (``>> /var/log/backup.log``), joined by ``-``;
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
#: A redirection written apart from its target: ``>``, ``>>``, ``2>``, ``<``, ``&>`` …
_REDIRECTION = re.compile(r"\d*(>>?|<)&?|&>>?")


def slug_of_command(command: str) -> str:
    """``/usr/bin/rsync -a ~/docs /mnt`` → ``rsync-docs``."""
    try:
        words = shlex.split(command, comments=False)
    except ValueError:
        words = command.split()
    parts = [os.path.basename(w.rstrip("/")) or w for w in _meaningful(words)[:2]]
    return _slug("-".join(parts)) or "routine"


def _meaningful(words: list[str]) -> list[str]:
    """The words that say what the command does: no option, no shell syntax, no file a
    redirection names (``cmd >> log``: the log is not what the job is)."""
    found: list[str] = []
    targets = iter(words)
    for word in targets:
        if _REDIRECTION.fullmatch(word):
            next(targets, None)  # its target
        elif not word.startswith("-") and not _SHELL_SYNTAX & set(word):
            found.append(word)
    return found


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
