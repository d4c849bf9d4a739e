"""Translation and locale helpers shared by the CLI and the desktop app.

Every user-facing sentence goes through :func:`_` so it can be translated; dates, times,
offsets and zone names are formatted by Babel in the user's locale.
"""

from __future__ import annotations

import gettext
import os
from functools import lru_cache

from babel import Locale, UnknownLocaleError, default_locale

FALLBACK_LOCALE = "en_US"


@lru_cache(maxsize=8)
def _translations(locale: str) -> gettext.NullTranslations:
    localedir = os.path.join(os.path.dirname(__file__), "locale")
    return gettext.translation("coven", localedir, languages=[locale], fallback=True)


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
