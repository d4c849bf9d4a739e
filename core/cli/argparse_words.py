"""argparse's own words — "usage:", "the following arguments are required", "invalid
choice" — said in the reader's language, from Coven's catalogue (DESIGN §12).

argparse says them through the standard library's gettext (``from gettext import gettext as
_, ngettext``), whose default domain has no catalogue of ours; it looks the two names up in its
own module at each call. :func:`in_our_words` points them at Coven's ``_`` and ``ngettext``
while the ``coven`` (or ``coven-desktop``) parser is built (its section titles, the help
option's help; the commands' own help texts are ``_()`` there) and parses (its refusals), and
back afterwards. A message argparse says that the catalogue does not know (another Python's
wording) stays English.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager

from coven_core.notation.i18n import N_, _, ngettext

#: argparse's messages a person can meet at ``coven``, word for word as argparse has them
#: (Python 3.11), so that ``make catalogs`` puts them into the catalogue.
WORDS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("not allowed with argument %s"),
    N_("one of the arguments %s is required"),
    N_("ignored explicit argument %r"),
)


@contextmanager
def in_our_words() -> Iterator[None]:
    """argparse's words come from Coven's catalogue meanwhile (one thread: the CLI's)."""
    namespace = vars(argparse)
    before = {"_": namespace["_"], "ngettext": namespace["ngettext"]}
    namespace.update(_=_, ngettext=ngettext)
    try:
        yield
    finally:
        namespace.update(before)
