"""The Routines window on the real app: typed into, clicked, and checked through the engine."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import qasync
from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtWidgets import QAbstractButton, QMessageBox, QToolButton
from pytestqt.qtbot import QtBot

from coven_core.events import Event, EventKind
from coven_core.model import RevisionSpec, RoutineState
from coven_core.operations.drafts import DraftCheck
from coven_core.queries import list_routines, show
from coven_core.scheduling import routines
from coven_desktop import texts
from coven_desktop.desktop import Desktop
from coven_desktop.windows.chips import CHIP_ICON_ROLE, ChipRole
from coven_desktop.windows.routine_editor import KindRole
from coven_desktop.windows.routine_model import STATE_ICONS, Column, NameRole
from coven_desktop.windows.routine_rows import schedule_words
from coven_desktop.windows.routines import Page
from tests.desktop.windows.awaiting import make_awaiting, stop_command
from tests.desktop.windows.running import start

NNBSP = "\u202f"  # Babel's space before AM/PM in en_US
NEW_YORK = "America/New_York"


@pytest.fixture
def page(desktop: Desktop, loop: qasync.QEventLoop) -> Page:
    desktop.locale = "en_US"
    shown = desktop.window.show_page("routines")
    assert isinstance(shown, Page)
    drive(loop, shown, desktop.window.settle)
    return shown


async def quiet(page: Page) -> None:
    """Until nothing is in flight: the actions, the refreshes they caused, the page's work."""
    for _ in range(2):  # a refresh's news may start one more reload
        await page.desktop.settle()
        await page.settle()
        await asyncio.sleep(0)


def drive(
    loop: qasync.QEventLoop,
    page: Page,
    interaction: Callable[[], object] = lambda: None,
    *,
    signal: SignalInstance | None = None,
    accept: Callable[[Any], bool] = lambda _value: True,
    timeout: float = 20.0,
) -> Any:
    """Interact (click, type, await), then wait for the first emission of ``signal`` that
    ``accept``s, if any (never a fixed wait), then until nothing is in flight.

    All in one run of the loop, with it running as in the app: qasync's run_until_complete
    processes Qt events once more after it has stopped, without a running asyncio loop, and
    a task stepped there (a click's action, a reload) fails.
    """
    found: asyncio.Future[Any] = loop.create_future()

    def seen(value: Any = None) -> None:
        if accept(value) and not found.done():
            found.set_result(value)

    async def run() -> Any:
        result = interaction()
        if asyncio.iscoroutine(result):
            result = await result
        if signal is not None:
            result = await asyncio.wait_for(found, timeout)
        await quiet(page)
        return result

    if signal is not None:
        signal.connect(seen)
    try:
        return loop.run_until_complete(run())
    finally:
        if signal is not None:
            signal.disconnect(seen)


def add(desktop: Desktop, loop: qasync.QEventLoop, name: str, schedule: str, zone: str) -> None:
    spec = RevisionSpec(schedule=schedule, timezone=zone, argv=("/bin/true",))
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.add_routine(name, spec)))


def engine(desktop: Desktop, loop: qasync.QEventLoop, read: Callable[[Any], Any]) -> Any:
    return loop.run_until_complete(desktop.service.call(read))


def click(qtbot: QtBot, loop: qasync.QEventLoop, page: Page, action: str) -> None:
    """Click a row action's tool button (pick it from More, for those kept there)."""
    chosen = page.action[action]
    button = page.actions_bar.widgetForAction(chosen)
    if button is None:
        menu = page.more.menu()
        assert chosen in menu.actions() and chosen.isEnabled() and page.more.isVisible()
        drive(loop, page, chosen.trigger)
        return
    assert isinstance(button, QToolButton) and button.isEnabled()
    drive(loop, page, lambda: qtbot.mouseClick(button, Qt.MouseButton.LeftButton))


def press(qtbot: QtBot, loop: qasync.QEventLoop, page: Page, button: QAbstractButton) -> None:
    drive(loop, page, lambda: qtbot.mouseClick(button, Qt.MouseButton.LeftButton))


def fill(qtbot: QtBot, loop, page: Page, name: str, command: str, zone: str = NEW_YORK) -> None:  # type: ignore[no-untyped-def]
    editor = page.editor

    def typing() -> None:
        qtbot.keyClicks(editor.name, name)
        editor.zone.setCurrentText(zone)
        qtbot.keyClicks(editor.command, command)

    drive(loop, page, typing)


def type_schedule(qtbot: QtBot, loop, page: Page, text: str) -> DraftCheck:  # type: ignore[no-untyped-def]
    """Type a schedule; the preview and errors shown for exactly that text."""
    editor = page.editor
    editor.schedule.clear()
    return drive(
        loop, page, lambda: qtbot.keyClicks(editor.schedule, text),
        signal=editor.previewUpdated, accept=lambda _result: editor.draft().schedule == text,
    )  # fmt: skip


def reload(loop: qasync.QEventLoop, page: Page) -> None:
    drive(loop, page, page.reload)


def preview_rows(page: Page) -> list[tuple[str, ...]]:
    """Each row's cells, and its time-zone note (in its tooltip, and under the list)."""
    tree = page.editor.preview
    items = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    return [(*(item.text(c) for c in range(3)), item.toolTip(0)) for item in items]


# --- the list ----------------------------------------------------------------------------


def test_the_model_passes_qtmodeltester(desktop, loop, page: Page, qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
    add(desktop, loop, "sync", "*/15 * * * *", "UTC")
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.pause("sync", "holiday")))
    reload(loop, page)
    assert page.model.rowCount() == 2
    qtmodeltester.check(page.model)


def test_rows_say_the_schedule_in_words_zone_state_and_next_run(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
    add(desktop, loop, "sync", "*/15 * * * *", "UTC")
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.pause("sync", "holiday")))
    ran_out(desktop, loop)  # 12:00 was due as sync was added: its run ends (a paused routine's
    reload(loop, page)  # run in flight goes on), and then the row says why it is paused
    model = page.model

    def cell(row: int, column: Column) -> str:
        return model.data(model.index(row, column))

    assert [cell(0, Column.NAME), cell(1, Column.NAME)] == ["backup", "sync"]
    assert cell(0, Column.SCHEDULE) == f"Every day at 2:30{NNBSP}AM"
    assert cell(1, Column.SCHEDULE) == "Every 15 minutes"
    assert (cell(0, Column.ZONE), cell(1, Column.ZONE)) == (NEW_YORK, "UTC")

    def tip(row: int, column: Column) -> str:
        return model.data(model.index(row, column), Qt.ItemDataRole.ToolTipRole)

    assert tip(0, Column.ZONE) == "Eastern Time (America/New_York)"
    assert tip(1, Column.ZONE) == "Coordinated Universal Time (UTC)"
    assert (cell(0, Column.STATE), cell(1, Column.STATE)) == ("Active", "Paused (holiday)")
    # Relative and absolute: 2 March 02:30 EST is 07:30 UTC, 19.5 hours after 1 March 12:00.
    assert cell(0, Column.NEXT_RUN).endswith("in 20 hours")
    tooltip = model.data(model.index(0, Column.NEXT_RUN), Qt.ItemDataRole.ToolTipRole)
    assert tooltip == f"Mar 2, 2026, 2:30:00{NNBSP}AM (America/New_York)"
    assert cell(1, Column.NEXT_RUN) == "—"
    assert cell(0, Column.LAST_RESULT) == "Not run yet"
    assert model.data(model.index(1, Column.ZONE), NameRole) == "sync"


def test_a_routine_paused_for_a_decision_points_to_the_window_not_the_command_line(
    desktop, loop, page
) -> None:  # type: ignore[no-untyped-def]
    """Not "Paused (run run3d… needs your decision (coven attention))": the window's words."""
    awaiting = make_awaiting(desktop, loop)
    stop_command(awaiting)
    reload(loop, page)
    state = page.model.data(page.model.index(0, Column.STATE))
    assert state == "Paused (a run needs your decision in Needs attention)"
    assert awaiting.run_id not in state


def test_the_page_says_in_which_zone_its_times_are(  # type: ignore[no-untyped-def]
    desktop, loop, page, monkeypatch
) -> None:
    monkeypatch.setenv("TZ", "America/Sao_Paulo")  # the viewer's zone: no summer time in 2026
    time.tzset()
    try:
        add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
        drive(loop, page, page.reload)
        # Next run is the viewer's time (Eastern 02:30 is 04:30 in São Paulo), beside a Time
        # zone column naming another zone: the page says whose times they are.
        next_run = page.model.data(page.model.index(0, Column.NEXT_RUN))
        assert next_run.startswith(f"tomorrow 4:30{NNBSP}AM")
        assert page.zone_caption.text() == "Times in Brasilia Standard Time"
        assert page.zone_caption.toolTip() == "America/Sao_Paulo"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_routine_only_its_upstream_runs_says_after_what(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
    spec = RevisionSpec(schedule="after", timezone="UTC", argv=("/bin/true",), after="backup")
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.add_routine("verify", spec)))
    reload(loop, page)
    model = page.model
    cells = [model.data(model.index(1, column)) for column in (Column.SCHEDULE, Column.NEXT_RUN)]
    assert cells == ["after backup", "after backup"]


def test_a_broken_routine_says_so_and_the_others_read_as_before(
    desktop, loop, page, qtmodeltester
) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
    add(desktop, loop, "sync", "*/15 * * * *", "UTC")

    def corrupt(e: Any) -> None:
        e.store.conn.execute(
            "UPDATE revisions SET timezone = 'Mars/Olympus' WHERE number = 1 "
            "AND routine_id = (SELECT id FROM routines WHERE name = 'sync')"
        )
        routines.timetable.cache_clear()

    engine(desktop, loop, corrupt)
    reload(loop, page)
    model = page.model

    def cell(row: int, column: Column) -> str:
        return model.data(model.index(row, column))

    assert cell(0, Column.SCHEDULE) == f"Every day at 2:30{NNBSP}AM"
    assert cell(1, Column.STATE) == "Broken: edit or delete it"
    chip = [model.data(model.index(row, Column.STATE), ChipRole) for row in (0, 1)]
    assert chip == ["active", "broken"]  # a chip of a colour and an icon of its own
    assert model.data(model.index(1, Column.STATE), CHIP_ICON_ROLE) == STATE_ICONS["broken"]
    assert "Mars/Olympus" in cell(1, Column.SCHEDULE) and "coven routine edit sync" in cell(
        1, Column.SCHEDULE
    )
    assert (cell(1, Column.ZONE), cell(1, Column.NEXT_RUN)) == ("Mars/Olympus", "—")
    qtmodeltester.check(model)


def test_rows_follow_the_users_locale(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
    desktop.locale = "de_DE"
    reload(loop, page)
    model = page.model
    assert model.data(model.index(0, Column.SCHEDULE)) == "Täglich um 02:30"
    assert model.data(model.index(0, Column.ZONE), Qt.ItemDataRole.ToolTipRole) == (
        "Nordamerikanische Ostküstenzeit (America/New_York)"
    )
    assert "in 20 Stunden" in model.data(model.index(0, Column.NEXT_RUN))


def test_a_reload_words_only_the_schedules_in_view(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    for hour in range(24):
        for minute in (0, 30):
            add(desktop, loop, f"job-{hour:02d}{minute:02d}", f"{minute} {hour} * * *", "UTC")
    schedule_words.cache_clear()
    reload(loop, page)
    page.table.viewport().repaint()
    worded = schedule_words.cache_info().currsize
    assert 0 < worded < page.model.rowCount() == 48  # the others when they are shown
    model = page.model
    assert model.data(model.index(47, Column.SCHEDULE)) == f"Every day at 11:30{NNBSP}PM"


def test_an_edited_routine_says_its_new_schedule(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
    reload(loop, page)
    model = page.model
    assert model.data(model.index(0, Column.SCHEDULE)) == f"Every day at 2:30{NNBSP}AM"
    later = lambda spec: replace(spec, schedule="0 4 * * 1,5")  # noqa: E731
    engine(desktop, loop, lambda e: e.operator.edit_routine("backup", later))
    reload(loop, page)  # the words already made were for the revision before
    assert model.data(model.index(0, Column.SCHEDULE)) == (
        f"Every Monday and Friday at 4:00{NNBSP}AM"
    )


def test_the_words_already_made_follow_a_change_of_locale(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
    reload(loop, page)
    model = page.model
    assert model.data(model.index(0, Column.SCHEDULE)) == f"Every day at 2:30{NNBSP}AM"
    desktop.locale = "de_DE"
    reload(loop, page)
    assert model.data(model.index(0, Column.SCHEDULE)) == "Täglich um 02:30"
    assert model.data(model.index(0, Column.ZONE), Qt.ItemDataRole.ToolTipRole) == (
        "Nordamerikanische Ostküstenzeit (America/New_York)"
    )


def test_the_next_run_says_today_once_the_day_has_changed(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)  # 07:30 UTC on 2 March
    reload(loop, page)
    model = page.model
    assert model.data(model.index(0, Column.NEXT_RUN)).startswith("tomorrow")
    desktop.clock.advance(timedelta(hours=13))  # 1:00 UTC on 2 March, this machine's zone
    reload(loop, page)
    assert model.data(model.index(0, Column.NEXT_RUN)) == f"today 7:30{NNBSP}AM, in 6 hours"


def test_the_next_run_moves_on_with_the_clock_while_nothing_happens(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    """Left open overnight with no news and nothing running, the page said "tomorrow" of a run
    due that same morning: its words moved on only at a reload or while a run went."""
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)  # 07:30 UTC on 2 March
    reload(loop, page)
    assert page.minutes.isActive() and not page.model.running
    desktop.clock.advance(timedelta(hours=13))  # 1:00 UTC on 2 March, this machine's zone
    page.minutes.timeout.emit()  # a minute later
    assert (
        page.model.data(page.model.index(0, Column.NEXT_RUN)) == f"today 7:30{NNBSP}AM, in 6 hours"
    )


def test_a_cells_words_are_made_once_while_the_clock_stands(
    desktop, loop, page, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
    reload(loop, page)
    made: list[datetime] = []
    real = texts.when

    def when(at: datetime, now: datetime, locale: str) -> str:
        made.append(now)
        return real(at, now, locale)

    monkeypatch.setattr(texts, "when", when)
    model, cell = page.model, page.model.index(0, Column.NEXT_RUN)
    for _ in range(2):
        page.table.viewport().repaint()
    assert model.data(cell).endswith("in 20 hours") and made == []  # made at the reload's paint
    model.tick(desktop.clock.now_utc() + timedelta(hours=13))  # past midnight, this zone
    page.table.viewport().repaint()
    assert model.data(cell) == f"today 7:30{NNBSP}AM, in 6 hours" and len(made) == 1


def test_the_list_reloads_on_the_engines_news(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    assert page.model.rowCount() == 0
    add(desktop, loop, "backup", "@daily", "UTC")  # as the CLI would: no call from the page
    drive(loop, page, desktop.refresh)  # what the bridge does after a pass with news
    assert page.model.rowCount() == 1


# --- the editor --------------------------------------------------------------------------


def test_typing_a_schedule_updates_the_preview_with_the_gap_marked(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/bin/true")
    result = type_schedule(qtbot, loop, page, "30 2 * * *")
    assert result.problems == ()
    assert page.editor.words.text() == f"Every day at 2:30{NNBSP}AM"
    rows = preview_rows(page)
    assert len(rows) == 8
    assert rows[0][:3] == (f"Mar 2, 2026, 2:30{NNBSP}AM", "UTC-05:00", "Planned")  # no ":00"
    gap = rows[6]  # Sunday 8 March 2026: 02:00 jumps to 03:00 in New York
    assert gap[0].startswith("Mar 8, 2026") and gap[2] == "Skipped: this time does not exist"
    assert "does not exist in America/New_York" in gap[3]
    assert page.editor.notes.isVisible() and f"• {gap[3]}" in page.editor.notes.text()
    assert page.editor.preview.topLevelItem(6).data(0, KindRole) == "nonexistent"
    assert page.editor.preview.topLevelItem(6).font(0).strikeOut()
    assert rows[7][1] == "UTC-04:00"


def test_the_preview_fits_its_pane_in_german_at_the_default_width(
    desktop, qtbot, loop, page
) -> None:  # type: ignore[no-untyped-def]
    """Seen on X: the status column was cut ("Übersprunge"): the line "… the next clock
    change:" widened the time's column, and "02:30:00" did the rest."""
    desktop.locale = "de_DE"
    page.window().resize(1000, 700)
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/bin/true", zone="Europe/Berlin")
    type_schedule(qtbot, loop, page, "30 2 * * *")
    tree = page.editor.preview
    header = tree.header()
    used = sum(header.sectionSize(column) for column in range(header.count()))
    assert used <= tree.viewport().width()
    assert preview_rows(page)[0][0].endswith("02:30")  # no seconds where none can be


def test_a_fold_is_marked_as_run_at_the_first_pass(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    fill(qtbot, loop, page, "once", "/bin/true")
    type_schedule(qtbot, loop, page, "once 2026-11-01T01:30")
    [(wall, offset, status, note)] = preview_rows(page)
    assert wall == f"Nov 1, 2026, 1:30{NNBSP}AM"
    assert (offset, status) == ("UTC-04:00", "Happens twice: runs at the first")
    assert "happens twice in America/New_York" in note


def test_an_invalid_schedule_shows_the_engines_message_inline(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/bin/true")
    result = type_schedule(qtbot, loop, page, "0 0 L * *")
    error = page.editor.errors["schedule"]
    assert error.isVisible()
    assert error.text() == "cron: unsupported part 'L' in field 3 (day of month)"
    assert result.spec is None and preview_rows(page) == []
    type_schedule(qtbot, loop, page, "0 0 1 * *")  # fixed: the message goes away
    assert not error.isVisible()


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("*/0 * * * *", "cron-Feld 1 (Minute): die Schrittweite 0 ist nicht erlaubt"),
        ("every 0m", "Intervall: das Intervall muss mindestens 1 Minute betragen"),
    ],
)
def test_a_bad_schedule_is_named_in_the_apps_language(
    desktop, qtbot, loop, page, schedule, message
) -> None:  # type: ignore[no-untyped-def]
    """The parser's refusal in the German window is German, like the form around it."""
    desktop.locale = "de_DE"
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/bin/true")
    result = type_schedule(qtbot, loop, page, schedule)
    error = page.editor.errors["schedule"]
    assert error.isVisible() and error.text() == message
    assert result.spec is None and preview_rows(page) == []


def test_an_unknown_zone_is_named_inline(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/bin/true", zone="Mars/Olympus")
    type_schedule(qtbot, loop, page, "@daily")
    assert page.editor.errors["timezone"].text().startswith("unknown time zone 'Mars/Olympus'")


def test_saving_adds_the_routine_through_the_engine(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/usr/bin/rsync -a '/my docs' /mnt")
    type_schedule(qtbot, loop, page, "30 2 * * *")
    press(qtbot, loop, page, page.editor.save_button)
    drive(loop, page)
    spec = engine(desktop, loop, lambda e: show(e.store, "backup").revision.spec)
    assert (spec.schedule, spec.timezone) == ("30 2 * * *", NEW_YORK)
    assert spec.argv == ("/usr/bin/rsync", "-a", "/my docs", "/mnt") and not spec.shell
    assert not page.editor.isVisible()
    assert page.selected() is not None and page.selected().name == "backup"


def test_a_new_routine_offers_this_computers_zone_by_its_key(
    desktop, qtbot, loop, page, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Not the engine's keyword ``local``: the computer's key, said as such; saved, the
    routine is bound to that key (CONTRACT §3.2)."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    page.open_editor()
    drive(loop, page)
    assert page.editor.zone.currentText() == "Asia/Tokyo (this computer's zone)"
    drive(loop, page, lambda: qtbot.keyClicks(page.editor.name, "backup"))
    drive(loop, page, lambda: qtbot.keyClicks(page.editor.command, "/bin/true"))
    type_schedule(qtbot, loop, page, "30 2 * * *")
    press(qtbot, loop, page, page.editor.save_button)
    drive(loop, page)
    assert engine(desktop, loop, lambda e: show(e.store, "backup").revision.spec.timezone) == (
        "Asia/Tokyo"
    )
    click(qtbot, loop, page, "edit")
    assert page.editor.zone.currentText() == "Asia/Tokyo"  # a routine's own zone: its key


def test_shell_syntax_is_said_under_the_command_and_saving_keeps_it_as_typed(
    desktop, qtbot, loop, page
) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    assert "~" not in page.editor.command.placeholderText()  # the example needs no shell
    fill(qtbot, loop, page, "notes", "/bin/cp -r ~/Notes /mnt/backup")
    type_schedule(qtbot, loop, page, "30 2 * * *")
    said = page.editor.command_warnings
    assert said.isVisible() and said.text().startswith("~ means something only to a shell")
    drive(loop, page, lambda: page.editor.shell.setChecked(True),
          signal=page.editor.previewUpdated)  # fmt: skip
    assert not said.isVisible()
    drive(loop, page, lambda: page.editor.shell.setChecked(False),
          signal=page.editor.previewUpdated)  # fmt: skip
    assert said.isVisible()
    press(qtbot, loop, page, page.editor.save_button)  # said, not refused
    drive(loop, page)
    spec = engine(desktop, loop, lambda e: show(e.store, "notes").revision.spec)
    assert spec.argv == ("/bin/cp", "-r", "~/Notes", "/mnt/backup") and not spec.shell


def test_a_refusal_is_shown_inline_and_nothing_typed_is_lost(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "@daily", "UTC")
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/bin/true")
    type_schedule(qtbot, loop, page, "30 2 * * *")
    press(qtbot, loop, page, page.editor.save_button)
    drive(loop, page)
    status = page.editor.errors["form"]
    assert status.isVisible() and "a routine named 'backup' already exists" in status.text()
    assert page.editor.isVisible() and page.editor.schedule.text() == "30 2 * * *"
    assert (
        engine(desktop, loop, lambda e: show(e.store, "backup").revision.spec.schedule) == "@daily"
    )


def test_the_editor_is_built_when_first_opened_and_shares_the_width(loop, page) -> None:  # type: ignore[no-untyped-def]
    assert page._editor is None  # the page opens without it
    page.window().resize(1000, 700)
    drive(loop, page, page.open_editor)
    assert page._editor is not None and page.editor.isVisible()
    list_width, editor_width = page._splitter.sizes()
    assert min(list_width, editor_width) >= 0.4 * (list_width + editor_width)


def test_open_editor_prefills_an_example(page: Page) -> None:
    page.open_editor("backup", "30 2 * * *", "/usr/bin/true")
    editor = page.editor
    assert editor.isVisible() and not editor.name.isReadOnly()
    assert (editor.name.text(), editor.schedule.text(), editor.command.text()) == (
        "backup", "30 2 * * *", "/usr/bin/true",
    )  # fmt: skip


def test_editing_makes_a_new_revision_and_keeps_the_rest(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "30 2 * * *", NEW_YORK)
    reload(loop, page)
    assert page.select("backup")
    click(qtbot, loop, page, "edit")
    editor = page.editor
    assert editor.name.isReadOnly() and editor.schedule.text() == "30 2 * * *"
    type_schedule(qtbot, loop, page, "0 4 * * 1,5")
    press(qtbot, loop, page, editor.save_button)
    drive(loop, page)
    view = engine(desktop, loop, lambda e: show(e.store, "backup"))
    assert view.revision.number == 2 and view.revision.spec.schedule == "0 4 * * 1,5"
    assert view.revision.spec.timezone == NEW_YORK
    model = page.model
    assert (
        model.data(model.index(0, Column.SCHEDULE)) == f"Every Monday and Friday at 4:00{NNBSP}AM"
    )


# --- row actions -------------------------------------------------------------------------


def test_pause_and_resume_from_the_row_actions(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "@daily", "UTC")
    reload(loop, page)
    page.select("backup")
    click(qtbot, loop, page, "pause")
    drive(loop, page)
    state = engine(desktop, loop, lambda e: show(e.store, "backup").routine.state)
    assert state is RoutineState.PAUSED
    assert page.model.data(page.model.index(0, Column.STATE)).startswith("Paused")
    assert page.model.data(page.model.index(0, Column.STATE), ChipRole) == "paused"
    assert page.action["resume"].isEnabled() and not page.action["pause"].isEnabled()
    click(qtbot, loop, page, "resume")
    drive(loop, page)
    assert (
        engine(desktop, loop, lambda e: show(e.store, "backup").routine.state)
        is RoutineState.ACTIVE
    )


def test_run_now_while_it_runs_makes_one_waiting_run_and_says_so(
    desktop, qtbot, loop, page
) -> None:  # type: ignore[no-untyped-def]
    """A running routine's row does not change at Run now (its run waits for the one going),
    so the page says what happened; a second click makes no second run."""
    start(desktop, loop, "slow", "/bin/sleep", "30")
    reload(loop, page)
    page.select("slow")
    button = page.actions_bar.widgetForAction(page.action["run_now"])
    said = []
    for _ in range(2):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        loop.run_until_complete(page.settle())
        said.append(page.notice.label.text() if page.notice.isVisible() else None)
    assert said == ["slow is running: this run starts when that one ends.",
                    "A run of slow is already waiting to start: no second one was made."]  # fmt: skip
    waiting = engine(desktop, loop, lambda e: e.store.conn.execute(
        "SELECT count(*) FROM occurrences WHERE kind = 'manual' AND state = 'planned'"
    ).fetchone()[0])  # fmt: skip
    assert waiting == 1
    engine(desktop, loop, lambda e: e.operator.cancel_routine("slow"))


def test_run_now_runs_it_and_the_last_result_says_so(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "@yearly", "UTC")
    reload(loop, page)
    page.select("backup")
    button = page.actions_bar.widgetForAction(page.action["run_now"])

    def settled(events: list[Event]) -> bool:
        return any(event.kind is EventKind.SETTLED for event in events)

    drive(loop, page, lambda: qtbot.mouseClick(button, Qt.MouseButton.LeftButton),
          signal=desktop.service.eventsArrived, accept=settled, timeout=30)  # fmt: skip
    kinds = engine(desktop, loop, lambda e: [
        row[0] for row in e.store.conn.execute("SELECT kind FROM occurrences")
    ])  # fmt: skip
    assert kinds == ["manual"]
    assert page.model.data(page.model.index(0, Column.LAST_RESULT)) == "Succeeded, just now"


def test_delete_asks_first_and_then_deletes(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    add(desktop, loop, "backup", "@daily", "UTC")
    reload(loop, page)
    page.select("backup")
    click(qtbot, loop, page, "delete")
    box = page.confirmation
    assert box is not None and box.isVisible() and "backup" in box.text()
    press(qtbot, loop, page, box.button(QMessageBox.StandardButton.Cancel))
    drive(loop, page)
    assert [v.routine.name for v in engine(desktop, loop, lambda e: list_routines(e.store))] == [
        "backup"
    ]
    page.select("backup")
    click(qtbot, loop, page, "delete")
    box = page.confirmation
    assert box is not None
    press(qtbot, loop, page, box.button(QMessageBox.StandardButton.Yes))
    drive(loop, page)
    assert engine(desktop, loop, lambda e: list_routines(e.store)) == []
    state = engine(
        desktop, loop, lambda e: e.store.conn.execute("SELECT state FROM routines").fetchone()[0]
    )
    assert state == "deleted"
    assert page.model.rowCount() == 0


def test_the_welcomes_first_routine_opens_the_editor_with_its_example(
    desktop: Desktop, qtbot: QtBot, loop: qasync.QEventLoop
) -> None:
    welcome = desktop.window.pages["welcome"]
    button = welcome.add_first  # type: ignore[attr-defined]
    routines = desktop.window.show_page("routines")
    assert isinstance(routines, Page)
    desktop.window.show_page("welcome")
    editor = routines.editor
    drive(loop, routines, lambda: qtbot.mouseClick(button, Qt.MouseButton.LeftButton),
          signal=editor.previewUpdated)  # fmt: skip
    assert desktop.window.stack.currentWidget() is routines and editor.isVisible()
    assert (editor.name.text(), editor.schedule.text()) == ("backup", "30 2 * * *")
    assert editor.command.text() == welcome.command  # type: ignore[attr-defined]


def test_explain_opens_the_dst_explanation_of_the_selected_routine(
    desktop, qtbot, loop, page
) -> None:  # type: ignore[no-untyped-def]
    from coven_desktop.windows.explanation import ExplanationWindow

    add(desktop, loop, "nightly", "30 2 * * *", NEW_YORK)
    reload(loop, page)
    page.select("nightly")
    click(qtbot, loop, page, "explain")
    window = next(w for w in page.findChildren(ExplanationWindow) if w.routine == "nightly")
    drive(loop, page, window.settle)
    assert window.isVisible()
    assert window.heading.text() == "nightly"
    assert "New York" in window.sentence.text()
    # 8 March 2026 in New York: 02:30 does not exist, and the window says so before it happens
    assert "jump forward from 2:00" in window.changes.text()
    assert "will be skipped" in window.changes.text()
    window.close()


def test_a_running_routine_says_for_how_long_and_cancel_run_cancels_it(
    desktop, qtbot, loop, page
) -> None:  # type: ignore[no-untyped-def]
    from tests.desktop.windows.running import row_of, start

    occurrence = start(desktop, loop, "sleeper", "/bin/sh", "-c", "exec sleep 60")
    drive(loop, page, page.reload)
    page.select("sleeper")
    model = page.model
    assert model.data(model.index(0, Column.STATE)) == "Running for 0 sec"
    desktop.clock.advance(timedelta(minutes=2, seconds=3))
    qtbot.waitUntil(  # the row's own one-second timer moves it on
        lambda: model.data(model.index(0, Column.STATE)) == "Running for 2 min 3 sec", timeout=3000
    )
    assert page.action["cancel"].isEnabled()
    click(qtbot, loop, page, "cancel")
    box = page.confirmation
    assert box is not None and box.isVisible() and "sleeper" in box.text()

    def settled(events: list[Event]) -> bool:
        return any(event.kind is EventKind.SETTLED for event in events)

    yes = box.button(QMessageBox.StandardButton.Yes)
    drive(loop, page, lambda: qtbot.mouseClick(yes, Qt.MouseButton.LeftButton),
          signal=desktop.service.eventsArrived, accept=settled)  # fmt: skip
    assert row_of(desktop, loop, occurrence).outcome == "cancelled"
    drive(loop, page, page.reload)
    assert model.data(model.index(0, Column.STATE)) == "Active"
    assert not page.action["cancel"].isEnabled()


def test_the_filter_keeps_routines_whose_name_or_state_holds_the_text(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    for name in ("backup-photos", "backup-mail", "sync"):
        add(desktop, loop, name, "@daily", "UTC")
    loop.run_until_complete(desktop.act(lambda e: e.operator.pause("sync", "by hand")))
    drive(loop, page, page.reload)
    qtbot.keyClick(page, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert page.filter.hasFocus()
    qtbot.keyClicks(page.filter, "BACKUP")
    assert shown_names(page) == ["backup-mail", "backup-photos"]
    page.filter.setText("paused")
    assert shown_names(page) == ["sync"]
    page.table.selectRow(0)
    assert page.selected() is not None and page.selected().name == "sync"  # type: ignore[union-attr]
    loop.run_until_complete(desktop.act(lambda e: e.operator.resume("sync")))
    drive(loop, page, page.reload)  # the rows changed under the same text: judged anew
    assert shown_names(page) == []


def test_another_pages_edit_opens_a_routine_the_filter_hid_or_says_it_is_gone(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    for name in ("backup", "sync"):
        add(desktop, loop, name, "@daily", "UTC")
    drive(loop, page, page.reload)
    page.filter.setText("sync")
    drive(loop, page, lambda: page.edit_routine("backup"))
    assert page.filter.text() == "" and page.selected().name == "backup"  # type: ignore[union-attr]
    assert page.editor.isVisible() and page.editor.editing.routine.name == "backup"
    page.editor.close_editor()
    drive(loop, page, lambda: page.edit_routine("gone"))
    assert not page.editor.isVisible()
    assert page.notice.isVisible() and "no routine named gone" in page.notice.text()


def test_routines_imported_from_here_are_chosen_once_created(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    importer = page.open_import()
    importer.source.setCurrentIndex(importer.source.findText("A systemd timer"))
    importer.path.setText(
        str(Path(__file__).parents[2] / "core" / "moving" / "data" / "backup.timer")
    )
    importer.path.editingFinished.emit()
    loop.run_until_complete(importer.settle())
    qtbot.mouseClick(importer.create_button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(importer.settle())
    drive(loop, page)
    assert page.selected() is not None and page.selected().name == "backup"  # type: ignore[union-attr]
    importer.close()


def test_columns_sort_by_what_they_mean(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    add(desktop, loop, "later", "0 23 * * *", "UTC")
    add(desktop, loop, "sooner", "0 13 * * *", "UTC")
    drive(loop, page, page.reload)
    page.table.sortByColumn(Column.NEXT_RUN, Qt.SortOrder.AscendingOrder)
    assert shown_names(page) == ["sooner", "later"]  # by the instant, not the words
    page.table.sortByColumn(Column.NAME, Qt.SortOrder.DescendingOrder)
    assert shown_names(page) == ["sooner", "later"]


def test_a_sort_keeps_the_selected_routine_and_holds_across_reloads(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    add(desktop, loop, "later", "0 23 * * *", "UTC")
    add(desktop, loop, "sooner", "0 13 * * *", "UTC")
    add(desktop, loop, "also-later", "0 23 * * *", "UTC")
    drive(loop, page, page.reload)
    assert page.select("sooner")
    page.table.sortByColumn(Column.NEXT_RUN, Qt.SortOrder.DescendingOrder)
    assert shown_names(page) == ["also-later", "later", "sooner"]  # a tie: by name
    assert page.selected().name == "sooner"  # type: ignore[union-attr]
    add(desktop, loop, "soonest", "30 12 * * *", "UTC")
    drive(loop, page, page.reload)
    assert shown_names(page) == ["also-later", "later", "sooner", "soonest"]
    assert page.selected().name == "sooner"  # type: ignore[union-attr]
    page.table.sortByColumn(Column.SCHEDULE, Qt.SortOrder.AscendingOrder)  # by the words
    assert shown_names(page) == ["also-later", "later", "soonest", "sooner"]  # "11:…" < "1:…"


def shown_names(page) -> list[str]:  # type: ignore[no-untyped-def]
    shown = page.shown
    return [shown.index(row, Column.NAME).data() for row in range(shown.rowCount())]


def ran_out(desktop: Desktop, loop: qasync.QEventLoop, timeout: float = 20.0) -> None:
    """Until no run is in flight (real runners: their commands end in real time)."""
    deadline = loop.time() + timeout
    while True:
        overview = loop.run_until_complete(desktop.refresh())
        if not overview.running:
            return
        assert loop.time() < deadline, f"still running: {overview.running}"
        loop.run_until_complete(asyncio.sleep(0.05))  # real time: a real command ends


def test_a_fresh_form_says_nothing_until_a_field_is_typed_in(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    drive(loop, page, page.editor.check)
    errors = page.editor.errors
    assert not errors["name"].isVisible() and not errors["command"].isVisible()
    assert errors["name"].text()  # the engine did find it: empty, not yet shown
    type_schedule(qtbot, loop, page, "0 0 L * *")
    assert errors["schedule"].isVisible() and not errors["name"].isVisible()
    press(qtbot, loop, page, page.editor.save_button)  # a save shows every problem
    assert errors["name"].isVisible() and errors["command"].isVisible()


def test_enter_saves_and_esc_cancels(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/bin/true")
    type_schedule(qtbot, loop, page, "@daily")
    drive(loop, page, lambda: qtbot.keyClick(page.editor.command, Qt.Key.Key_Return))
    drive(loop, page)
    assert engine(desktop, loop, lambda e: show(e.store, "backup").routine.name) == "backup"
    assert not page.editor.isVisible()
    page.open_editor()
    qtbot.keyClicks(page.editor.name, "draft")
    qtbot.keyClick(page.editor.name, Qt.Key.Key_Escape)
    assert not page.editor.isVisible()
    assert [v.routine.name for v in engine(desktop, loop, lambda e: list_routines(e.store))] == [
        "backup"
    ]


def test_the_preview_reaches_the_next_clock_change_however_far(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/bin/true", zone="Europe/Berlin")
    type_schedule(qtbot, loop, page, "30 2 * * *")  # 8 days from 1 March: none is 29 March
    rows = preview_rows(page)
    assert rows[-2][0] == "… the next clock change:"
    assert rows[-1][0].startswith("Mar 29, 2026") and rows[-1][2].startswith("Skipped")
    type_schedule(qtbot, loop, page, "30 2 * * 1")  # Mondays: no clock change touches them
    assert "… the next clock change:" not in [row[0] for row in preview_rows(page)]


def run_now_refused_on_a_quarantined_routine(
    desktop: Desktop, loop: qasync.QEventLoop, page: Page
) -> None:
    add(desktop, loop, "sync", "@daily", "UTC")
    loop.run_until_complete(desktop.act(lambda e: e.operator.quarantine("sync", "by hand")))
    drive(loop, page, page.reload)
    page.select("sync")
    page.action["run_now"].trigger()
    drive(loop, page)


def test_a_refused_run_now_on_a_quarantined_routine_offers_probe_and_release(
    desktop, qtbot, loop, page
) -> None:  # type: ignore[no-untyped-def]
    run_now_refused_on_a_quarantined_routine(desktop, loop, page)
    notice = page.notice
    assert notice.isVisible() and "quarantined" in notice.text()
    assert "coven " not in notice.text()  # a button, never a command to type
    assert [b.text() for b in notice.buttons] == ["Probe once", "Release"]
    press(qtbot, loop, page, notice.buttons[1])
    drive(loop, page)
    assert not notice.isVisible()
    assert (
        engine(desktop, loop, lambda e: show(e.store, "sync").routine.state) is RoutineState.ACTIVE
    )


def test_a_notice_stays_through_a_reload_that_keeps_its_routine(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    """News reloads the page at any time (a run ending elsewhere): its model reset emptied the
    selection for a moment, and that cleared the refusal the person had not yet read."""
    run_now_refused_on_a_quarantined_routine(desktop, loop, page)
    assert page.notice.isVisible()
    drive(loop, page, page.reload)
    assert page.notice.isVisible() and page.selected().name == "sync"


def test_a_notice_goes_when_another_routine_is_picked(desktop, loop, page) -> None:  # type: ignore[no-untyped-def]
    for name in ("a", "b"):
        add(desktop, loop, name, "@daily", "UTC")
    drive(loop, page, page.reload)
    page.select("a")
    page.notice.say("something about a")
    page.select("b")
    assert not page.notice.isVisible()


def test_the_toolbar_fits_at_the_default_width_with_the_rest_under_more(page: Page) -> None:
    page.window().resize(1000, 700)
    page.actions_bar.adjustSize()
    overflow = page.actions_bar.findChild(QToolButton, "qt_toolbar_ext_button")
    assert overflow is None or not overflow.isVisible()
    assert page.more.isVisible() and {a.objectName() for a in page.more.menu().actions()} == {
        "runs",
        "delete",
        "explain",
        "make_live",
        "import",
        "export",
    }


def test_a_trial_routine_shows_as_a_trial_and_make_it_live_makes_it_live(
    desktop: Desktop, qtbot: QtBot, loop: qasync.QEventLoop, page: Page
) -> None:
    spec = RevisionSpec(schedule="@daily", timezone="UTC", argv=("/bin/true",), shadow=True)
    engine(desktop, loop, lambda e: e.operator.add_routine("sync", spec))
    reload(loop, page)
    state = page.model.index(0, Column.STATE)
    assert page.model.data(state, ChipRole) == "trial"
    assert page.model.data(state) == "Trial"  # a chip's word, fitting its column
    tooltip = page.model.data(state, Qt.ItemDataRole.ToolTipRole)
    assert "the command never starts" in tooltip
    page.select("sync")
    click(qtbot, loop, page, "make_live")
    drive(loop, page)
    revision = engine(desktop, loop, lambda e: show(e.store, "sync").revision)
    assert revision.number == 2 and not revision.spec.shadow  # a new revision, live
    assert page.model.data(page.model.index(0, Column.STATE), ChipRole) == "active"
    assert not page.action["make_live"].isEnabled()
