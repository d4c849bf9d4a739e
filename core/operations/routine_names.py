"""What a routine may be called (issue 19): a name a person can read, type and tell apart.

1 to 64 characters; letters, digits, punctuation, symbols and inner spaces of any script;
no control or format characters (newlines, tabs, the bidirectional overrides U+202A–U+202E
and isolates U+2066–U+2069 that make text read in another order than it is stored, zero-width
characters), no line or paragraph separators, no leading or trailing whitespace.
"""

from __future__ import annotations

import unicodedata

from coven_core.errors import ValidationError
from coven_core.notation.i18n import _

LONGEST_NAME = 64
#: Unicode categories a name may not contain: control, format, surrogate, private use,
#: unassigned, line and paragraph separators.
_REFUSED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def check_name(name: str) -> None:
    """A ValidationError naming the first thing wrong with ``name``, if anything is."""
    if not name.strip():
        raise ValidationError(_("a routine needs a name"))
    if len(name) > LONGEST_NAME:
        raise ValidationError(
            _("a routine's name must be at most {most} characters (this one has {count})").format(
                most=LONGEST_NAME, count=len(name)
            )
        )
    if name != name.strip():
        raise ValidationError(
            _("the name {name!r} starts or ends with a space; remove it").format(name=name)
        )
    for char in name:
        if unicodedata.category(char) in _REFUSED:
            raise ValidationError(
                _(
                    "the name {name!r} contains {char}, which a name may not (control, format "
                    "and invisible characters are refused)"
                ).format(name=name, char=_described(char))
            )


def _described(char: str) -> str:
    named = unicodedata.name(char, "")
    code = f"U+{ord(char):04X}"
    return f"{code} {named}" if named else code
