"""A routine as typed into the desktop's form: the engine's readings and messages per field."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from coven_core.errors import ScheduleError, ZoneError
from coven_core.model import MisfirePolicy, RevisionSpec
from coven_core.notation.durations import NO_TIMEOUT, DurationError, parse_limit
from coven_core.operations.drafts import RoutineDraft, check, edit_to
from coven_core.schedule.cron import CronSchedule
from coven_core.tz import tzdb
from coven_core.tz.binding import LocalTimeKind

NOW = datetime(2026, 3, 7, 12, 0, tzinfo=UTC)
DRAFT = RoutineDraft(
    "backup", "30 2 * * *", "America/New_York", "/usr/bin/rsync -a '/my docs' /mnt"
)


def message_of(error: type[Exception], reading) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(error) as caught:
        reading()
    return str(caught.value)


def test_a_good_draft_gives_its_spec_and_a_preview_with_the_gap_marked() -> None:
    checked = check(DRAFT, NOW)
    assert checked.problems == ()
    assert checked.spec is not None
    assert checked.spec.argv == ("/usr/bin/rsync", "-a", "/my docs", "/mnt")
    assert checked.spec.shell is False
    assert checked.preview is not None and len(checked.preview.moments) == 8
    first = checked.preview.moments[0]  # 8 March 2026 02:30 does not exist in New York
    assert first.local == datetime(2026, 3, 8, 2, 30) and first.kind is LocalTimeKind.NONEXISTENT
    assert all(m.kind is LocalTimeKind.REGULAR for m in checked.preview.moments[1:])


def test_the_fold_is_marked_as_repeated_at_its_first_pass() -> None:
    checked = check(replace(DRAFT, schedule="30 1 * * *"), datetime(2026, 10, 31, tzinfo=UTC))
    assert checked.preview is not None
    fold = checked.preview.moments[1]
    assert fold.local == datetime(2026, 11, 1, 1, 30) and fold.kind is LocalTimeKind.REPEATED
    assert fold.fold == 0 and fold.offset == timedelta(hours=-4)


def test_schedule_errors_are_the_parsers_own_messages() -> None:
    checked = check(replace(DRAFT, schedule="0 0 L * *"), NOW)
    assert checked.spec is None and checked.preview is None
    assert checked.message("schedule") == message_of(
        ScheduleError, lambda: CronSchedule.parse("0 0 L * *")
    )
    assert checked.message("schedule") == "cron: unsupported part 'L' in field 3 (day of month)"


def test_an_unknown_zone_is_named_and_the_schedule_is_still_checked() -> None:
    checked = check(replace(DRAFT, timezone="Mars/Olympus", schedule="61 * * * *"), NOW)
    assert checked.message("timezone") == message_of(ZoneError, lambda: tzdb.zone("Mars/Olympus"))
    assert checked.message("schedule") == "cron field 1 (minute): 61 is out of range 0-59"


def test_each_field_reports_its_own_problem() -> None:
    draft = replace(DRAFT, name=" ", command="/bin/echo 'oops", grace="5 minutes", timeout="0s")
    checked = check(draft, NOW)
    assert checked.message("name") == "a routine needs a name"
    assert "unclosed quote" in (checked.message("command") or "")
    assert checked.message("grace") == message_of(DurationError, lambda: parse_limit("5 minutes"))
    assert checked.message("timeout") == "'0s' is not longer than zero"
    assert checked.preview is not None  # the schedule itself is fine: still previewed


def test_an_empty_command_is_refused() -> None:
    checked = check(replace(DRAFT, command="  "), NOW)
    assert (checked.message("command") or "").startswith("the command is empty")


def test_a_shell_command_stays_one_string() -> None:
    checked = check(replace(DRAFT, command="tar c ~ | gzip > /tmp/x.tgz", shell=True), NOW)
    assert checked.spec is not None
    assert checked.spec.argv == ("tar c ~ | gzip > /tmp/x.tgz",) and checked.spec.shell


def test_durations_and_policies_reach_the_spec() -> None:
    draft = replace(DRAFT, grace="15m", timeout="1h30m", retries=2, idempotent=True,
                    misfire=MisfirePolicy.SKIP_MISSED)  # fmt: skip
    spec = check(draft, NOW).spec
    assert spec is not None
    assert (spec.grace, spec.timeout) == (timedelta(minutes=15), timedelta(minutes=90))
    assert (spec.retries, spec.idempotent, spec.misfire) == (2, True, MisfirePolicy.SKIP_MISSED)


def test_an_empty_duration_field_is_what_a_field_left_alone_means() -> None:
    """Empty: no limit, and the global default timeout; the keywords still read as typed."""
    empty = replace(DRAFT, grace="", timeout=" ", max_runtime_per_day="", cooldown="",
                    cooldown_max="")  # fmt: skip
    spec = check(empty, NOW).spec
    assert spec is not None
    assert (spec.grace, spec.timeout, spec.max_runtime_per_day) == (None, None, None)
    assert (spec.cooldown, spec.cooldown_max) == (None, None)
    typed = replace(DRAFT, grace="none", timeout="none", cooldown="none")
    spec = check(typed, NOW).spec
    assert spec is not None and (spec.grace, spec.cooldown) == (None, None)
    assert spec.timeout == NO_TIMEOUT  # said explicitly: no timeout at all
    assert check(replace(DRAFT, timeout="default"), NOW).spec == check(DRAFT, NOW).spec
    assert not DRAFT.has_policies and not replace(DRAFT, cooldown="none").has_policies


def test_a_stored_revision_shows_its_defaults_as_empty_fields() -> None:
    spec = RevisionSpec("@daily", "UTC", ("/bin/true",), timeout=NO_TIMEOUT)
    shown = RoutineDraft.of("s", spec)
    assert (shown.grace, shown.timeout, shown.cooldown_max) == ("", "none", "")
    assert RoutineDraft.of("s", replace(spec, timeout=None)).timeout == ""


def test_a_stored_revision_reads_back_into_the_same_draft() -> None:
    spec = check(DRAFT, NOW).spec
    assert spec is not None
    assert RoutineDraft.of("backup", spec) == DRAFT
    shell = RevisionSpec("@daily", "UTC", ("echo hi | wc",), shell=True)
    assert RoutineDraft.of("s", shell).command == "echo hi | wc"


def test_an_edit_keeps_what_the_form_does_not_show() -> None:
    stored = RevisionSpec("@daily", "Europe/Berlin", ("/bin/true",), zone_source="local: TZ",
                          env=(("TOKEN", "x"),), cwd="/srv")  # fmt: skip
    typed = check(replace(DRAFT, timezone="Europe/Berlin"), NOW).spec
    assert typed is not None
    edited = edit_to(typed)(stored)
    assert edited.schedule == "30 2 * * *" and edited.argv == typed.argv
    assert (edited.env, edited.cwd, edited.zone_source) == (stored.env, "/srv", "local: TZ")
    moved = edit_to(check(DRAFT, NOW).spec)(stored)  # type: ignore[arg-type]
    assert (moved.timezone, moved.zone_source) == ("America/New_York", "explicit")


def test_shell_syntax_without_a_shell_is_said_and_the_draft_still_saves() -> None:
    typed = replace(DRAFT, command="/bin/sh ~/backup.sh && /bin/true")
    checked = check(typed, NOW)
    assert checked.problems == () and checked.spec is not None  # said, not refused
    assert checked.spec.argv == ("/bin/sh", "~/backup.sh", "&&", "/bin/true")
    assert checked.warnings == (
        "~ && mean something only to a shell: without one, the program gets them as typed "
        "(tick 'run through a shell' if they are meant for one)",
    )
    assert check(replace(typed, shell=True), NOW).warnings == ()


def test_a_program_not_there_now_is_said_once_the_form_is_valid() -> None:
    typed = replace(DRAFT, command="no-such-program-here --now")
    assert check(typed, NOW).warnings == (
        "the command 'no-such-program-here' is not found on PATH now; its runs fail until it "
        "exists",
    )
    assert check(replace(typed, name=""), NOW).warnings == ()  # first the problem
