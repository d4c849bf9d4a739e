"""``coven``'s entry point: one command's module is loaded, not every command's; its help is
in the reader's language, English unchanged."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from coven_core.cli.argparse_words import in_our_words
from coven_core.cli.main import COMMAND_MODULES, _command_module, build_parser
from tests.core.cli.conftest import invoke


@pytest.mark.parametrize("module", sorted(COMMAND_MODULES))
def test_the_table_names_exactly_what_each_module_registers(module: str) -> None:
    commands = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(f"coven_core.cli.{module}").register(commands)
    assert tuple(commands.choices) == COMMAND_MODULES[module]


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["status"], "status_cmd"),
        (["--data-dir", "/x", "status", "--json"], "status_cmd"),
        (["--data-dir=/x", "run-now", "r"], "run_cmd"),
        (["--help"], None),
        (["statuz"], None),
        ([], None),
    ],
)
def test_the_command_word_picks_its_module(argv: list[str], module: str | None) -> None:
    assert _command_module(argv) == module


def test_help_and_typos_still_list_every_command() -> None:
    listed = build_parser(["--help"])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(listed) == [name for names in COMMAND_MODULES.values() for name in names]


# What a read-only ``coven status`` must not load: the engine's heavy parts, and modules whose
# import alone is a visible share of a fresh process's start (issue #9: ``dataclasses`` brings
# ``inspect``, ``logging`` ~8 ms, the model's enums ~8 ms), so the records on that path are
# NamedTuples and those imports wait for the code that needs them.
NOT_FOR_STATUS = (
    "coven_core.scheduling.scheduler", "coven_core.runtime.runner", "coven_core.integrity.doctor",
    "coven_core.operator", "coven_core.schedule.rrule", "coven_core.views.attention",
    "coven_core.model", "coven_core.scheduling.routines", "dataclasses", "inspect", "logging", "json",
)  # fmt: skip


@pytest.mark.parametrize(("output", "needed"), [([], set()), (["--json"], {"json"})])
def test_status_loads_nothing_it_does_not_use(
    tmp_path: Path, output: list[str], needed: set[str]
) -> None:
    probe = (
        "import sys\n"
        "from coven_core.cli.main import main\n"
        f"main(['status', '--data-dir', {str(tmp_path / 'data')!r}, *{output!r}])\n"
        f"print(sorted(set({NOT_FOR_STATUS!r}) - {needed!r} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=60)  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "[]"


# -- help in the reader's language (issue #22: no screen mixes languages) -----------------------
def _parsers(
    parser: argparse.ArgumentParser, words: str = "coven"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every parser under it, with the words that reach it."""
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, f"{words} {name}")


def _texts(words: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    """Every sentence the help of ``parser`` shows, and where."""
    parser.format_help()  # a stray % in a translation raises here, as on `coven … -h`
    if parser.description:
        yield words, parser.description
    for action in parser._actions:
        if action.help and action.help != argparse.SUPPRESS:
            yield f"{words} {'/'.join(action.option_strings) or action.dest}", action.help
        for listed in getattr(action, "_choices_actions", ()):  # the subcommands' summaries
            yield f"{words} {listed.dest}", listed.help or ""


def _every_text(monkeypatch: pytest.MonkeyPatch, language: str) -> dict[str, str]:
    monkeypatch.setenv("LC_ALL", language)
    with in_our_words():
        return {where: text for found in _parsers(build_parser()) for where, text in _texts(*found)}


def test_every_help_text_is_said_in_german(monkeypatch: pytest.MonkeyPatch) -> None:
    """A help text added without ``_()`` (or left out of the catalogue) is English in German."""
    english = _every_text(monkeypatch, "C.UTF-8")
    german = _every_text(monkeypatch, "de_DE.UTF-8")
    assert german.keys() == english.keys() and len(english) > 90
    untranslated = sorted(f"{where}: {text!r}" for where, text in english.items()
                          if german[where] == text and text)  # fmt: skip
    assert not untranslated, "\n".join(untranslated)


HELP = {  # a command line's help: a few of its lines in English and in German
    ("--help",): (
        ["Coven: a scheduler that keeps its word.", "add, list, show, edit or delete routines",
         "show a schedule's next moments (dry run)", "the store's directory (default:"],
        ["Coven: ein Planer, der sein Wort hält.", "Routinen hinzufügen, auflisten, zeigen",
         "die nächsten Zeitpunkte eines Zeitplans zeigen", "das Verzeichnis des Datenspeichers"],
    ),
    ("routine", "add", "--help"): (
        ["[options] -- COMMAND", "a trial: decide every moment as if live", "working directory",
         "run only on mains power: a moment on battery waits within its grace", "print one JSON"],
        ["[Optionen] -- COMMAND", "ein Probelauf: jeden Zeitpunkt wie im Echtbetrieb",
         "Arbeitsverzeichnis", "wartet innerhalb seiner Karenzzeit", "ein JSON-Objekt ausgeben"],
    ),
    ("audit", "--help"): (  # argparse's %(default)s, in both
        ["the newest N entries (default 20)"], ["die neuesten N Einträge (Standard 20)"],
    ),
}  # fmt: skip


@pytest.mark.parametrize("argv", HELP)
def test_help_is_one_language(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]
) -> None:
    english, german = HELP[argv]
    for language, said, not_said in (
        ("C.UTF-8", english, german),
        ("de_DE.UTF-8", german, english),
    ):
        monkeypatch.setenv("LC_ALL", language)
        status, out, _err = invoke(capsys, *argv)
        words = " ".join(out.split())  # whatever the terminal's width wraps
        assert status == 0
        assert [text for text in said if text not in words] == [], out
        assert [text for text in not_said if text in words] == [], out
