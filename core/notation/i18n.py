"""Translation and locale helpers shared by the engine, the CLI and the desktop app.

One gettext domain, ``coven``, for everything (DESIGN §12): every user-facing sentence goes
through :func:`_` (plurals through :func:`ngettext`; :func:`N_` marks a text that is translated
later, where it is shown), and dates, times, offsets and zone names are formatted by Babel in
the user's locale. The catalogues live in the repository's ``resources/locale`` folder;
``make catalogs`` extracts the template and updates them.
"""

from __future__ import annotations

import gettext
import io
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache

from babel import Locale, UnknownLocaleError, default_locale

FALLBACK_LOCALE = "en_US"
DOMAIN = "coven"

_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
#: Where catalogues are looked for, in order: the compiled ``.mo`` files a build puts into the
#: package (a wheel, the frozen bundle), then the ``.po`` sources of a source checkout.
CATALOG_DIRS = (
    os.path.join(_PACKAGE, "locale"),
    os.path.join(os.path.dirname(_PACKAGE), "resources", "locale"),
)

_chosen: str | None = None
_this_thread = threading.local()  # .locale: set only inside written_down()


def use_locale(locale: str | None) -> None:
    """Make ``locale`` the one :func:`_` and :func:`ngettext` translate into when given none:
    the desktop app's locale, set by the app (None: the environment's again)."""
    global _chosen
    _chosen = locale


@contextmanager
def written_down() -> Iterator[None]:
    """Messages made in this thread meanwhile are English: text the engine stores (the event
    log, a state reason) stays English and is translated where it is shown (DESIGN §12),
    though the same refusal said to a person at once is said in their language."""
    before = getattr(_this_thread, "locale", None)
    _this_thread.locale = FALLBACK_LOCALE
    try:
        yield
    finally:
        _this_thread.locale = before


def _(message: str, locale: str | None = None) -> str:
    """The translation of ``message`` for ``locale`` (the process's locale when None)."""
    return _translations(locale or _current()).gettext(message)


def ngettext(singular: str, plural: str, n: int, locale: str | None = None) -> str:
    """The translation of ``singular``/``plural`` for the count ``n`` (the locale's plural
    rule picks the form; the caller still formats ``n`` into it)."""
    return _translations(locale or _current()).ngettext(singular, plural, n)


def _current() -> str:
    return getattr(_this_thread, "locale", None) or _chosen or user_locale()


def N_(message: str) -> str:
    """Mark ``message`` for extraction only: it is translated with :func:`_` where shown."""
    return message


@lru_cache(maxsize=8)
def _translations(locale: str) -> gettext.NullTranslations:
    """A compiled catalogue if there is one, else the ``.po`` source compiled in memory
    (``de_DE`` falls back to ``de``), else no translation."""
    languages = list(dict.fromkeys((locale, locale.split("_")[0])))
    for folder in CATALOG_DIRS:
        found = gettext.translation(DOMAIN, folder, languages=languages, fallback=True)
        if type(found) is not gettext.NullTranslations:
            return found
    for folder in CATALOG_DIRS:
        for language in languages:
            source = os.path.join(folder, language, "LC_MESSAGES", f"{DOMAIN}.po")
            if os.path.exists(source):
                return _compiled(source, language)
    return gettext.NullTranslations()


def _compiled(source: str, language: str) -> gettext.NullTranslations:
    # Babel's catalog machinery is a visible share of a fresh process's start (bench_status's
    # row "`coven status` wall time"): only a locale with a catalogue pays it (an en_US
    # `coven status` never does), and only in a source checkout (a build ships .mo files).
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with open(source, "rb") as po:
        catalog = read_po(po, locale=language, domain=DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def user_locale() -> str:
    """The user's locale from the environment; ``C``/``POSIX`` and unknown ones become en_US."""
    name = default_locale(("LC_ALL", "LC_TIME", "LANG", "LANGUAGE"))
    if not name or name.startswith(("C", "POSIX")) or name.startswith("en_US_POSIX"):
        return FALLBACK_LOCALE
    try:
        Locale.parse(name)
    except (UnknownLocaleError, ValueError):
        return FALLBACK_LOCALE
    return name
