"""Whether a routine's command could start now, and start as its author meant.

* :func:`missing`: its executable and working directory exist. Only a warning when a
  routine is added or edited: the disk may be mounted, or the program installed, before the
  first run — the routine is stored either way. A run whose command cannot start fails then,
  classified ``validation`` (DESIGN §6).
* :func:`shell_syntax`: what in a command line, as a person types it, only a shell gives a
  meaning to. A command runs without a shell unless asked (DESIGN §8), so ``~/Notes`` or
  ``&& make`` reach its program as typed; the editor says so while the person types.
"""

from __future__ import annotations

import os
import re
import shutil

from coven_core.model import RevisionSpec
from coven_core.notation.i18n import _

#: A command line read as a shell reads it, one piece at a time (quotes may be left open).
_PIECES = re.compile(
    r"""(?P<escaped>\\.)|(?P<single>'[^']*'?)|(?P<double>"(?:\\.|[^"\\])*"?)"""
    r"""|(?P<expansion>\$(?:[A-Za-z_]\w*|[{(])|`)|(?P<operator>[|&;<>]+)|(?P<space>\s+)"""
    r"""|(?P<tilde>~)|(?P<other>.)""",
    re.DOTALL,
)
#: What a shell still expands between double quotes.
_EXPANSIONS = re.compile(r"\\.|(\$(?:[A-Za-z_]\w*|[{(])|`)", re.DOTALL)


def missing(spec: RevisionSpec) -> list[str]:
    """What the command needs and does not find now, each in one sentence; none for a
    ``--shell`` command (its first word is a script, not a program to look up)."""
    found = [] if spec.shell else _executable(spec)
    if spec.cwd is not None and not os.path.isdir(spec.cwd):
        found.append(_("the working directory {path} does not exist now").format(path=spec.cwd))
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
        said = _("the command {path} does not exist now (or is not executable)")
        return [said.format(path=program)]
    search = dict(spec.env).get("PATH", os.environ.get("PATH", os.defpath))
    if shutil.which(program, path=search) is not None:
        return []
    return [_("the command {name} is not found on PATH now").format(name=repr(program))]


def shell_syntax(command: str) -> tuple[str, ...]:
    """What a shell would read in ``command`` and a plain start passes on as typed, each
    once, in order: a word's leading ``~``; ``$NAME``, ``${``, ``$(`` and backquotes,
    outside single quotes; the operators ``| & ; < >`` outside any quotes. A backslash
    keeps the character after it for itself, as in a shell."""
    found: list[str] = []
    word_starts = True
    for piece in _PIECES.finditer(command):
        kind, text = piece.lastgroup, piece.group()
        if kind == "double":
            found += [seen for seen in _EXPANSIONS.findall(text) if seen]
        elif kind in ("expansion", "operator") or (kind == "tilde" and word_starts):
            found.append(text)
        word_starts = kind in ("space", "operator")
    return tuple(dict.fromkeys(found))
