"""argparse's own words in ``coven``'s refusals and help follow the reader's language (issue #22):
German under a German locale, English as before otherwise, and argparse left as it was."""

from __future__ import annotations

import argparse
import gettext

import pytest

from tests.core.cli.conftest import invoke

REFUSALS = [
    ([], "coven: {error}: {required}: COMMAND\n"),
    (["statuz"], "coven: {error}: {argument} COMMAND: {choice}: 'statuz' ("),
    (["status", "--bogus"], "coven: {error}: {unknown}: --bogus\n"),
    (["--data-dir"], "coven: {error}: {argument} --data-dir: {one}\n"),
    (["routine", "add", "x", "--env", "FOO"], "coven routine add: {error}: {argument} --env: "
                                              "'FOO' {not_pair}\n"),
]  # fmt: skip
GERMAN = {
    "error": "Fehler", "required": "diese Argumente fehlen", "argument": "Argument",
    "choice": "ungültige Wahl", "unknown": "unbekannte Argumente", "one": "ein Argument erwartet",
    "not_pair": "ist nicht NAME=WERT",
}  # fmt: skip
ENGLISH = {
    "error": "error", "required": "the following arguments are required", "argument": "argument",
    "choice": "invalid choice", "unknown": "unrecognized arguments", "one": "expected one argument",
    "not_pair": "is not KEY=VALUE",
}  # fmt: skip


@pytest.mark.parametrize(("language", "words"), [("de_DE.UTF-8", GERMAN), ("C.UTF-8", ENGLISH)])
@pytest.mark.parametrize(("argv", "said"), REFUSALS)
def test_a_usage_error_is_one_line_in_the_readers_language(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    language: str,
    words: dict[str, str],
    argv: list[str],
    said: str,
) -> None:
    monkeypatch.setenv("LC_ALL", language)
    status, out, err = invoke(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.startswith(said.format(**words)) and err.count("\n") == 1, err


def test_help_names_its_sections_in_german(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    status, out, _err = invoke(capsys, "daemon", "--help")
    assert status == 0 and out.startswith("Aufruf: coven daemon [-h]")
    assert "\nOptionen:\n" in out and "diese Hilfe zeigen und beenden" in out


def test_argparse_speaks_through_the_standard_gettext_again_afterwards(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    invoke(capsys, "statuz")
    assert vars(argparse)["_"] is gettext.gettext
    assert vars(argparse)["ngettext"] is gettext.ngettext
