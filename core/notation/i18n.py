"""Translation and locale helpers shared by the CLI and the desktop app.

Every user-facing sentence goes through :func:`_` so it can be translated; dates, times,
offsets and zone names are formatted by Babel in the user's locale.
"""

from __future__ import annotations

import gettext
import io
import os
from functools import lru_cache

from babel import Locale, UnknownLocaleError, default_locale

FALLBACK_LOCALE = "en_US"


_LOCALE_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "locale")


@lru_cache(maxsize=8)
def _translations(locale: str) -> gettext.NullTranslations:
    """A compiled catalog if there is one, else the ``.po`` source compiled in memory
    (``de_DE`` falls back to ``de``), else no translation."""
    found = gettext.translation("coven", _LOCALE_DIR, languages=[locale], fallback=True)
    if type(found) is not gettext.NullTranslations:
        return found
    for language in dict.fromkeys((locale, locale.split("_")[0])):
        source = os.path.join(_LOCALE_DIR, language, "LC_MESSAGES", "coven.po")
        if os.path.exists(source):
            return _compiled(source, language)
    return found


def _compiled(source: str, language: str) -> gettext.NullTranslations:
    # Babel's catalog machinery is a visible share of a fresh process's start (bench_status's
    # row "`coven status` wall time"): only a locale with a catalog pays it (an en_US
    # `coven status` never does).
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    with open(source, "rb") as po:
        catalog = read_po(po, locale=language, domain="coven")
    compiled = io.BytesIO()
    write_mo(compiled, catalog)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def _(message: str, locale: str | None = None) -> str:
    """The translation of ``message`` for ``locale`` (the user's locale when None)."""
    return _translations(locale or user_locale()).gettext(message)


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
