"""The routine editor's policy fields (issue #23): typed into, saved, checked through the engine."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QStyle, QStyleOptionComboBox

from coven_core.model import RevisionSpec
from coven_core.notation.durations import NO_TIMEOUT
from coven_core.queries import show
from coven_desktop.windows.routine_editor import RoutineEditor
from tests.desktop.windows.test_routines import (
    NEW_YORK,
    click,
    drive,
    engine,
    fill,
    page,
    press,
    preview_rows,
    reload,
    type_schedule,
)

__all__ = ["page"]  # the fixture, shared with the routines window's tests


def test_except_dates_mark_the_preview_and_are_saved(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    open_policies(qtbot, loop, page)
    fill(qtbot, loop, page, "backup", "/bin/true")
    drive(loop, page, lambda: qtbot.keyClicks(page.editor.except_dates, "2026-03-03, 2026-03-02"))
    type_schedule(qtbot, loop, page, "0 9 * * *")
    statuses = [row[2] for row in preview_rows(page)[:4]]
    assert statuses == ["Planned", "Skipped: an excluded date", "Skipped: an excluded date",
                        "Planned"]  # fmt: skip
    assert page.editor.preview.topLevelItem(1).font(0).strikeOut()
    assert not page.editor.preview.topLevelItem(3).font(0).strikeOut()
    press(qtbot, loop, page, page.editor.save_button)
    drive(loop, page)
    spec = engine(desktop, loop, lambda e: show(e.store, "backup").revision.spec)
    assert (spec.timezone, spec.except_dates) == (NEW_YORK, (date(2026, 3, 2), date(2026, 3, 3)))


def test_a_bad_except_date_is_named_inline(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    open_policies(qtbot, loop, page)
    fill(qtbot, loop, page, "backup", "/bin/true")
    drive(loop, page, lambda: qtbot.keyClicks(page.editor.except_dates, "christmas"))
    result = type_schedule(qtbot, loop, page, "0 9 * * *")
    error = page.editor.errors["except_dates"]
    assert error.isVisible() and error.text() == "'christmas' is not a date like 2026-12-24"
    assert result.spec is None


def test_a_bad_except_date_is_named_in_the_apps_language(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    """The engine's refusal is said in the app's language, like the form around it."""
    desktop.locale = "de_DE"
    page.open_editor()
    open_policies(qtbot, loop, page)
    fill(qtbot, loop, page, "backup", "/bin/true")
    drive(loop, page, lambda: qtbot.keyClicks(page.editor.except_dates, "christmas"))
    type_schedule(qtbot, loop, page, "0 9 * * *")
    assert page.editor.errors["except_dates"].text() == "'christmas' ist kein Datum wie 2026-12-24"


def test_empty_durations_say_what_they_mean_and_save_as_no_limit_and_the_default(
    desktop, qtbot, loop, page
) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    editor = page.editor
    durations = (editor.grace, editor.timeout, editor.max_runtime, editor.cooldown,
                 editor.cooldown_max)  # fmt: skip
    assert [field.text() for field in durations] == [""] * 5  # no English keyword to read
    assert editor.timeout.placeholderText() == "The global default"
    assert editor.cooldown_max.placeholderText() == "One day"
    fill(qtbot, loop, page, "backup", "/bin/true")
    type_schedule(qtbot, loop, page, "0 9 * * *")
    spec = saved_spec(desktop, qtbot, loop, page, "backup")
    assert (spec.grace, spec.timeout, spec.cooldown, spec.cooldown_max) == (None,) * 4
    reload(loop, page)
    assert page.select("backup")
    click(qtbot, loop, page, "edit")
    assert not page.editor.policies.isVisible()  # empty durations are no policy
    drive(loop, page, lambda: retype(qtbot, {page.editor.timeout: "none"}))
    assert saved_spec(desktop, qtbot, loop, page, "backup").timeout == NO_TIMEOUT


def test_empty_durations_are_described_in_the_apps_language(desktop) -> None:  # type: ignore[no-untyped-def]
    desktop.locale = "de_DE"
    editor = RoutineEditor(desktop)
    assert editor.max_runtime.placeholderText() == "Keine Grenze"
    assert editor.timeout.placeholderText() == "Die allgemeine Vorgabe"
    assert "none eintippen (das englische Wort)" in editor.timeout.toolTip()
    editor.deleteLater()


@pytest.mark.parametrize("locale", ["en_US", "de_DE"])
def test_the_fields_are_never_cut_at_the_default_size(desktop, qtbot, loop, locale) -> None:  # type: ignore[no-untyped-def]
    """The editor's fields scroll up and down only: nothing in them is wider than the pane
    at 1000 x 700 (DESIGN §12), or a field, its placeholder and its error are cut."""
    desktop.locale = locale  # before the page is built: its labels are in this language
    page = desktop.window.show_page("routines")
    page.window().resize(1000, 700)
    drive(loop, page, desktop.window.settle)
    page.open_editor()
    open_policies(qtbot, loop, page)
    fields = page.editor.fields
    assert fields.widget().width() <= fields.viewport().width()


@pytest.mark.parametrize("locale", ["en_US", "de_DE"])
def test_every_choice_is_shown_whole_at_the_default_size(desktop, loop, locale) -> None:  # type: ignore[no-untyped-def]
    """A combo's choices fit its field at 1000 x 700: the short label is read in full, what it
    means is the choice's tooltip (issue #22: "Run the latest missed one, once" was cut)."""
    desktop.locale = locale
    page = desktop.window.show_page("routines")
    page.window().resize(1000, 700)
    drive(loop, page, desktop.window.settle)
    page.open_editor()
    drive(loop, page)
    for box in (page.editor.misfire, page.editor.overlap):
        option = QStyleOptionComboBox()
        box.initStyleOption(option)
        field = QStyle.SubControl.SC_ComboBoxEditField
        room = box.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option, field, box)
        for index in range(box.count()):
            text = box.itemText(index)
            assert box.fontMetrics().horizontalAdvance(text) <= room.width(), (text, room)
            assert box.itemData(index, Qt.ItemDataRole.ToolTipRole)  # the long form
        assert box.toolTip() == box.itemData(box.currentIndex(), Qt.ItemDataRole.ToolTipRole)


def test_a_trial_is_ticked_then_made_live_from_the_editor(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    open_policies(qtbot, loop, page)
    fill(qtbot, loop, page, "trial", "/bin/true")
    type_schedule(qtbot, loop, page, "0 9 * * *")
    qtbot.mouseClick(page.editor.shadow, Qt.MouseButton.LeftButton)
    press(qtbot, loop, page, page.editor.save_button)
    drive(loop, page)
    assert engine(desktop, loop, lambda e: show(e.store, "trial").revision.spec.shadow)
    reload(loop, page)
    assert page.select("trial")
    click(qtbot, loop, page, "edit")
    assert page.editor.shadow.isChecked()  # the editor shows the stored trial
    assert page.editor.policies.isVisible()  # unfolded: a policy is set
    qtbot.mouseClick(page.editor.shadow, Qt.MouseButton.LeftButton)  # make it live
    press(qtbot, loop, page, page.editor.save_button)
    drive(loop, page)
    revision = engine(desktop, loop, lambda e: show(e.store, "trial").revision)
    assert (revision.number, revision.spec.shadow) == (2, False)


def test_budgets_are_typed_and_saved(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    open_policies(qtbot, loop, page)
    fill(qtbot, loop, page, "budgeted", "/bin/true")
    type_schedule(qtbot, loop, page, "*/5 * * * *")
    editor = page.editor
    assert editor.max_runs.text() == "no limit"

    drive(loop, page, lambda: retype(qtbot, {editor.max_runs: "4", editor.max_runtime: "2h"}))
    spec = saved_spec(desktop, qtbot, loop, page, "budgeted")
    assert (spec.max_runs_per_day, spec.max_runtime_per_day) == (4, timedelta(hours=2))


def test_a_cooldown_is_typed_and_saved(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    open_policies(qtbot, loop, page)
    fill(qtbot, loop, page, "resting", "/bin/true")
    type_schedule(qtbot, loop, page, "*/5 * * * *")
    editor = page.editor

    drive(loop, page, lambda: retype(qtbot, {editor.cooldown: "15m", editor.cooldown_max: "ever"}))
    press(qtbot, loop, page, editor.save_button)
    drive(loop, page)
    error = editor.errors["cooldown_max"]
    assert error.isVisible() and "ever" in error.text()
    drive(loop, page, lambda: retype(qtbot, {editor.cooldown_max: "3h"}))
    spec = saved_spec(desktop, qtbot, loop, page, "resting")
    assert (spec.cooldown, spec.cooldown_max) == (timedelta(minutes=15), timedelta(hours=3))


def open_policies(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    """Unfold the editor's policies, as a person does, with a click on their heading."""
    toggle = page.editor.policies_toggle
    assert not page.editor.policies.isVisible()
    drive(loop, page, lambda: qtbot.mouseClick(toggle, Qt.MouseButton.LeftButton))
    assert page.editor.policies.isVisible()


def retype(qtbot, fields: dict) -> None:  # type: ignore[no-untyped-def,type-arg]
    """Replace what each field (a line edit or a spin box) says, typing like a person."""
    for field, text in fields.items():
        field.selectAll()
        qtbot.keyClicks(field, text)


def saved_spec(desktop, qtbot, loop, page, name: str):  # type: ignore[no-untyped-def]
    press(qtbot, loop, page, page.editor.save_button)
    drive(loop, page)
    return engine(desktop, loop, lambda e: show(e.store, name).revision.spec)


def test_a_group_is_typed_and_saved(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    open_policies(qtbot, loop, page)
    fill(qtbot, loop, page, "grouped", "/bin/true")
    type_schedule(qtbot, loop, page, "*/5 * * * *")
    drive(loop, page, lambda: retype(qtbot, {page.editor.group: " disk "}))
    assert saved_spec(desktop, qtbot, loop, page, "grouped").group == "disk"


def test_a_chain_is_typed_and_saved(desktop, qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    engine(desktop, loop, lambda e: e.operator.add_routine(
        "backup", RevisionSpec("@daily", "UTC", ("/bin/true",))))  # fmt: skip
    page.open_editor()
    open_policies(qtbot, loop, page)
    fill(qtbot, loop, page, "verify", "/bin/true")
    type_schedule(qtbot, loop, page, "@weekly")
    drive(loop, page, lambda: retype(qtbot, {page.editor.after: "backup:finished"}))
    spec = saved_spec(desktop, qtbot, loop, page, "verify")
    assert (spec.after, spec.after_outcome) == ("backup", "finished")


def tick(qtbot, box) -> None:  # type: ignore[no-untyped-def]
    """Click on the box itself, where a person clicks: a short label leaves the row's
    middle empty, and a check box toggles only on its box and label."""
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(6, box.height() // 2))


def test_conditions_and_keep_awake_are_ticked_saved_and_shown_again(
    desktop, qtbot, loop, page
) -> None:  # type: ignore[no-untyped-def]
    page.open_editor()
    open_policies(qtbot, loop, page)
    fill(qtbot, loop, page, "backup", "/bin/true")
    type_schedule(qtbot, loop, page, "0 9 * * *")
    editor = page.editor
    for box in (editor.on_ac_power, editor.when_online, editor.keep_awake):
        tick(qtbot, box)
    press(qtbot, loop, page, editor.save_button)
    drive(loop, page)
    spec = engine(desktop, loop, lambda e: show(e.store, "backup").revision.spec)
    assert (spec.on_ac_power, spec.when_online, spec.keep_awake) == (True, True, True)
    reload(loop, page)
    assert page.select("backup")
    click(qtbot, loop, page, "edit")
    assert page.editor.policies.isVisible()  # unfolded: a policy is set
    assert page.editor.on_ac_power.isChecked() and page.editor.keep_awake.isChecked()
    tick(qtbot, page.editor.when_online)
    press(qtbot, loop, page, page.editor.save_button)
    drive(loop, page)
    spec = engine(desktop, loop, lambda e: show(e.store, "backup").revision.spec)
    assert (spec.on_ac_power, spec.when_online, spec.keep_awake) == (True, False, True)


def test_the_rules_open_in_view(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    """Unfolded, the rules are scrolled to, not left below the fold of the fields."""
    page.desktop.window.resize(1000, 680)
    page.open_editor()
    drive(loop, page)
    bar = page.editor.fields.verticalScrollBar()
    assert bar.value() == 0
    open_policies(qtbot, loop, page)
    drive(loop, page)
    assert bar.maximum() > 0  # they do not all fit: the fields scroll
    assert bar.value() == min(bar.maximum(), page.editor.policies_toggle.y()) > 0


def test_the_preview_takes_no_more_room_than_its_rows(qtbot, loop, page) -> None:  # type: ignore[no-untyped-def]
    """Its longest list (eight moments, the next clock change and its moment) shows whole;
    the height left goes to the fields."""
    page.desktop.window.resize(1200, 900)
    page.open_editor()
    fill(qtbot, loop, page, "backup", "/bin/true", "Europe/Berlin")
    type_schedule(qtbot, loop, page, "30 2 * * *")  # 02:30 does not exist on a spring day
    preview = page.editor.preview
    assert preview.topLevelItemCount() == 10
    assert preview.verticalScrollBar().maximum() == 0  # every row in sight
    unused = preview.viewport().height() - 10 * preview.sizeHintForRow(0)
    assert 0 <= unused <= preview.sizeHintForRow(0)  # and no blank rows under them
    assert page.editor.fields.verticalScrollBar().maximum() == 0  # the fields whole, too
