"""Any command line and any environment: a status in {0, 2, 3}, never a traceback, and a
refusal is one line on stderr that changes nothing stored (issue 19).

Every command is enumerated from the parser itself, so a new command or option is driven
too. ``daemon`` is left out: it runs until stopped. A closed pipe and Ctrl-C at the entry
point are tested where they are handled (``test_main.py``), not here. Standard input holds a
crontab line and a line no crontab has, for ``import crontab`` (``-`` or no file).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coven_core.cli.main import build_parser
from tests.core.cli.conftest import Coven

LEFT_OUT = {"daemon"}  # runs until it is stopped


def _leaves(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Each command line's leading words and the parser that reads the rest."""
    nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not nested or not nested[0].required:
        yield words, parser
    for action in nested:
        for name, sub in action.choices.items():
            if name not in LEFT_OUT:
                yield from _leaves(sub, (*words, name))


COMMANDS = [(words, parser) for words, parser in _leaves(build_parser()) if words]

# What a person (or a script, or another user) could type, by what an argument means: mostly
# something near the edge of what is accepted, so that examples reach past the parser.
RUN = "<the seeded run>"  # replaced by the run the fixture made
_POOLS = {
    "name": ["backup", "backup", "nope", "", " backup", "a\nb", "\u202ebackup", "x" * 300],
    "number": ["0", "-1", "1", "3", "100", "101", "10000", "10001", "9" * 25, "٣", "１２", ""],
    "duration": ["1h", "90s", "0s", "none", "default", "36525d", "36526d", "9" * 20 + "d",
                 "١h", "1h30m", "30m1h", ""],
    "date": ["2026-03-08T02:30", "2030-01-01", "9000-12-31T23:59", "9000-12-31T23:59Z",
             "0001-01-01T00:00", "9999-12-31T23:59", "2026-02-30", "1970-01-01", "١٩٧٠-01-01"],
    "schedule": ["every 1m", "every 36525d", "every 9999999999d", "every ١m", "@hourly",
                 "30 2 * * *", "*/0 * * * *", f"*/{'9' * 23} * * * *", "*/90 * * * *",
                 "once 2090-03-12T02:30", "once 2090-03-12T03:30", "once 2020-01-01T00:00",
                 "once 9000-12-31T23:59", "rrule:FREQ=DAILY;COUNT=99999999999",
                 "rrule:FREQ=DAILY;UNTIL=20200101", "rrule:FREQ=MINUTELY;INTERVAL=99999999999",
                 "rrule:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "0 0 29 2 *", ""],
    "zone": ["UTC", "local", "Europe/Berlin", "America/New_York", "Pacific/Apia", "../etc",
             "EST5EDT", "localtime", ""],
    "run": [RUN, RUN, "nope", ""],
}  # fmt: skip
_MEANING = {
    "name": "name", "routine": "name", "count": "number", "limit": "number",
    "retries": "number", "quarantine_after": "number", "grace": "duration",
    "timeout": "duration", "stop_grace": "duration", "value": "duration", "start": "date",
    "end": "date", "dtstart": "date", "schedule": "schedule", "timezone": "zone", "tz": "zone",
    "run_id": "run", "identifier": "run",
}  # fmt: skip
_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=24
)  # argv holds no NUL; undecodable bytes (surrogates) are left to the entry point

ENVIRONMENTS = st.fixed_dictionaries(
    {
        "TZ": st.sampled_from([None, "", "UTC", "/etc/passwd", ":../../etc/shadow", "a" * 300,
                               "EST5EDT", "Europe/Berlin", ":/usr/share/zoneinfo/Asia/Tokyo"]),
        "LANG": st.sampled_from([None, "", "C", "de_DE.UTF-8", "ar_EG.UTF-8", "xx_YY",
                                 "../../etc", "a" * 300, "en_US@euro", "tr_TR.UTF-8"]),
        "LC_ALL": st.sampled_from([None, "", "C.UTF-8", "de_DE", "ja_JP.UTF-8", "!!"]),
    }
)  # fmt: skip


_NOT_DRAWN = (argparse._SubParsersAction, argparse._HelpAction)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    words, parser = draw(st.sampled_from(COMMANDS))
    line = list(words)
    for action in parser._actions:
        if isinstance(action, _NOT_DRAWN) or "--data-dir" in action.option_strings:
            continue  # help answers before anything is read; the store's place is the test's
        if action.option_strings and not draw(st.integers(0, 3)):
            line += [action.option_strings[-1], *_value(draw, action)]
        elif not action.option_strings and draw(st.integers(0, 9)):  # a positional, mostly
            line += _value(draw, action)
    if words in (("routine", "add"), ("routine", "edit")) and draw(st.integers(0, 3)):
        line += ["--", draw(st.sampled_from(["/bin/true", "", "a b"]))]
    return line


def _value(draw: st.DrawFn, action: argparse.Action) -> list[str]:
    if action.nargs == 0:
        return []
    if action.choices and draw(st.integers(0, 3)):
        return [str(draw(st.sampled_from(sorted(map(str, action.choices)))))]
    pool = _POOLS.get(_MEANING.get(action.dest, ""))
    if pool and draw(st.integers(0, 3)):
        return [draw(st.sampled_from(pool))]
    return [draw(_TEXT)]


@contextmanager
def environment(values: dict[str, str | None]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            _set(name, value)
        yield
    finally:
        for name, value in saved.items():
            _set(name, value)


STDIN = "30 2 * * * /bin/true\n\u202e * * * * x\n"


@contextmanager
def standard_input(text: str) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = saved


def _set(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


class Seeded(NamedTuple):
    coven: Coven
    run_id: str


@pytest.fixture
def seeded(coven: Coven, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Seeded:
    """A store with a routine and a manual run, so that commands reach past the lookup."""
    monkeypatch.chdir(tmp_path)  # a relative path someone types lands here
    coven.add("backup", "--schedule", "@hourly", "--tz", "Europe/Berlin")
    return Seeded(coven, coven.json("run-now", "backup", "--key", "k")["run_id"])


@settings(
    max_examples=int(os.environ.get("COVEN_ANY_INPUT_EXAMPLES", "200")),  # longer hunts: more
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(line=command_lines(), env=ENVIRONMENTS)
def test_any_command_line_is_answered_or_refused_in_one_line(
    seeded: Seeded, line: list[str], env: dict[str, str | None]
) -> None:
    answered_or_refused(seeded, line, env)


def answered_or_refused(seeded: Seeded, line: list[str], env: dict[str, str | None]) -> None:
    """Status 0, 2 or 3, never a traceback; a refusal is one line and changes nothing."""
    coven = seeded.coven
    line = [seeded.run_id if word == RUN else word for word in line]
    before = coven.snapshot()
    if os.environ.get("COVEN_ANY_INPUT_SHOW"):  # what is tried, before it can hang
        print("try", line, env, file=sys.__stderr__, flush=True)
    with environment(env), standard_input(STDIN):
        status, out, err = coven(*line)
    if os.environ.get("COVEN_ANY_INPUT_SHOW"):  # what the examples reach
        print(status, line[:2], err.strip()[:150], file=sys.__stderr__)
    assert "Traceback" not in err, err
    assert status in {0, 2, 3}, (status, err)
    if status:
        assert out == "" and err.count("\n") == 1 and err.endswith("\n"), err
        assert coven.snapshot() == before


@st.composite
def schedule_lines(draw: st.DrawFn) -> list[str]:
    """``preview`` and ``routine add`` with every part near an edge, none random: the
    schedule, zone and date interplay is where arithmetic overflows."""

    def pick(meaning: str) -> str:
        return draw(st.sampled_from(_POOLS[meaning]))

    line = ["--schedule", pick("schedule"), "--tz", pick("zone")]
    if draw(st.booleans()):
        line += ["--start", pick("date")]
    if draw(st.booleans()):
        name = draw(st.sampled_from(["new", "backup", "Sicherung – täglich"]))
        return ["routine", "add", name, *line, "--", "/bin/true"]
    for option, meaning in (("--from", "date"), ("--to", "date"), ("--count", "number")):
        if draw(st.booleans()):
            line += [option, pick(meaning)]
    return ["preview", *line]


@settings(
    max_examples=int(os.environ.get("COVEN_ANY_INPUT_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(line=schedule_lines(), env=ENVIRONMENTS)
def test_any_schedule_near_an_edge_is_answered_or_refused_in_one_line(
    seeded: Seeded, line: list[str], env: dict[str, str | None]
) -> None:
    answered_or_refused(seeded, line, env)
