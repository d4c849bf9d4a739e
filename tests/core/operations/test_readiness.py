"""What a routine's command will meet: shell syntax it runs without a shell for, and a
program or folder not there now (said when a routine is added or edited, never refused)."""

from __future__ import annotations

import pytest

from coven_core.model import RevisionSpec
from coven_core.notation.i18n import use_locale, written_down
from coven_core.operations.readiness import missing, shell_syntax


@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("rsync -a ~/Notes /mnt/backup", ("~",)),
        ("cd /srv && make >build.log 2>&1", ("&&", ">", ">&")),
        ("tar czf /b/$(date +%F).tgz ~", ("$(", "~")),
        ("echo ${HOME}/x; ls | wc -l", ("${", ";", "|")),
        ("echo `date` $USER", ("`", "$USER")),
        ('echo "$HOME" "a | b"', ("$HOME",)),  # a shell expands between double quotes
    ],
)
def test_what_only_a_shell_reads_is_found_once_each_in_order(typed: str, found: tuple) -> None:  # type: ignore[type-arg]
    assert shell_syntax(typed) == found


@pytest.mark.parametrize(
    "typed",
    [
        "/usr/bin/backup --to=/mnt/backup",
        "find /tmp -name '*.log' -delete",  # globs are the program's to read here
        "echo '$HOME' 'a && b' '~'",  # single quotes keep everything
        r"echo \~ \$HOME \&\& a~b",  # escaped, or not at a word's start
        "price 5$ 100%",  # a dollar sign before no name
        'echo "open',  # a quote left open: the draft's own check refuses it
    ],
)
def test_a_command_without_shell_syntax_is_left_alone(typed: str) -> None:
    assert shell_syntax(typed) == ()


def test_what_is_missing_is_said_in_the_readers_language(tmp_path) -> None:  # type: ignore[no-untyped-def]
    spec = RevisionSpec("@daily", "UTC", ("no-such-program-here",), cwd=str(tmp_path / "gone"))
    with written_down():
        english = missing(spec)
    assert english == [
        "the command 'no-such-program-here' is not found on PATH now",
        f"the working directory {tmp_path / 'gone'} does not exist now",
    ]
    use_locale("de_DE")  # the desktop's choice (conftest chooses none again)
    german = missing(spec)
    assert german == [
        "der Befehl 'no-such-program-here' ist jetzt nicht im PATH zu finden",
        f"das Arbeitsverzeichnis {tmp_path / 'gone'} gibt es jetzt nicht",
    ]
