"""The gettext catalogues (resources/locale): the template matches the sources, and German
translates every message, plurals included, with the same placeholders (DESIGN §12).

The messages are extracted here with Babel's own extractor and pyproject's
``[tool.babel.extract_messages]`` settings, the same ones ``make catalogs`` uses, so a new
``_()`` without a German translation fails here, not on a German screen.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_keywords
from babel.messages.pofile import read_po

from coven_core.notation.i18n import _, ngettext

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "resources" / "locale"
LANGUAGES = sorted(p.parents[1].name for p in LOCALE.glob("*/LC_MESSAGES/coven.po"))
_PLACEHOLDER = re.compile(r"\{(\w*)[^{}]*\}")


@cache
def extracted() -> dict[str | tuple[str, ...], list[str]]:
    """Every message of the sources (its id, the plural's pair), with the files it is in."""
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["babel"]
    extract = settings["extract_messages"]
    keywords = parse_keywords(extract["keywords"])
    found: dict[str | tuple[str, ...], list[str]] = {}
    for folder in extract["input_paths"]:
        for file, _line, message, _comments, _context in extract_from_dir(
            ROOT / folder, [("**.py", "python")], keywords=keywords
        ):
            key = message if isinstance(message, str) else tuple(m for m in message if m)
            found.setdefault(key, []).append(f"{folder}/{file}")
    return found


def _catalog(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as po:
        return read_po(po, locale=locale)


def _key(message: Message) -> str | tuple[str, ...]:
    return message.id if isinstance(message.id, str) else tuple(message.id)


def test_the_template_is_up_to_date() -> None:
    """`make catalogs` was run after the last change to a message."""
    template = {_key(m) for m in _catalog(LOCALE / "coven.pot") if m.id}
    missing = sorted(str(k) for k in extracted().keys() - template)
    stale = sorted(str(k) for k in template - extracted().keys())
    assert not missing and not stale, f"run `make catalogs`: new {missing}, gone {stale}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_message_is_translated(language: str) -> None:
    catalog = _catalog(LOCALE / language / "LC_MESSAGES" / "coven.po", language)
    translated = {_key(m): m for m in catalog if m.id}
    problems = []
    for key, files in sorted(extracted().items(), key=lambda item: str(item[0])):
        message = translated.get(key)
        if message is None or message.fuzzy or not _complete(message):
            problems.append(f"{key!r} ({', '.join(sorted(set(files)))})")
    assert not problems, f"{len(problems)} untranslated in {language}:\n" + "\n".join(problems)


def _complete(message: Message) -> bool:
    forms = message.string if isinstance(message.string, tuple) else (message.string,)
    return bool(forms) and all(forms)


@pytest.mark.parametrize("language", LANGUAGES)
def test_translations_keep_the_placeholders(language: str) -> None:
    """A translation that names another ``{placeholder}`` fails at .format() time."""
    catalog = _catalog(LOCALE / language / "LC_MESSAGES" / "coven.po", language)
    wrong = []
    for message in catalog:
        if not message.id or not message.string:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        wanted = set().union(*(_PLACEHOLDER.findall(i) for i in ids))
        for text in strings:
            if text and set(_PLACEHOLDER.findall(text)) - wanted:
                wrong.append(f"{ids[0]!r} -> {text!r}")
    assert not wrong, "\n".join(wrong)


def test_plurals_follow_the_language() -> None:
    assert ngettext("{count} routine", "{count} routines", 1, "en_US") == "{count} routine"
    assert ngettext("{count} routine", "{count} routines", 2, "en_US") == "{count} routines"
    assert ngettext("{count} routine", "{count} routines", 1, "de_DE") == "{count} Routine"
    assert ngettext("{count} routine", "{count} routines", 2, "de_DE") == "{count} Routinen"
    assert _("Needs attention", "de_DE") == "Handlungsbedarf"
    assert _("Needs attention", "en_US") == "Needs attention"


def test_the_app_has_no_second_translation_system() -> None:
    """Qt's ``tr()`` has no catalogue here (DESIGN §12): a text through it stays English on a
    German screen, so every text goes through ``_()``/``ngettext`` instead."""
    qt_tr = re.compile(r"(?<![\w.])(?:self\.)?tr\(|QCoreApplication\.translate\(")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("coven_desktop", "core")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if qt_tr.search(line)
    ]
    assert not found, "Qt's tr() instead of _(): " + ", ".join(found)
