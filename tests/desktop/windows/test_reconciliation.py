"""The Needs attention window, driven through its widgets, with a real runner whose command
outlives it (issues #8, #21; DESIGN §5, §8)."""

from __future__ import annotations

from collections.abc import Iterator

import psutil
import pytest
import qasync
from PySide6.QtCore import QCoreApplication, QEvent, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QAbstractScrollArea, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from coven_core.integrity import audit
from coven_core.model import RoutineState
from coven_core.operations.runs import operator_name
from coven_core.queries import show
from coven_core.views.attention import Item
from coven_core.views.inspection import inspect
from coven_desktop.demo.attention import dark_palette
from coven_desktop.desktop import Desktop
from coven_desktop.windows import routine_model, run_model
from coven_desktop.windows.reconciliation import Page
from coven_desktop.windows.tones import Tone, contrast
from tests.desktop.windows.awaiting import Awaiting, make_awaiting, stop_command
from tests.desktop.windows.running import quiet


@pytest.fixture
def awaiting(desktop: Desktop, loop: qasync.QEventLoop) -> Iterator[Awaiting]:
    found = make_awaiting(desktop, loop)
    yield found
    stop_command(found)


@pytest.fixture
def page(desktop: Desktop, loop: qasync.QEventLoop, awaiting: Awaiting) -> Page:
    desktop.window.resize(1000, 700)  # the size every page must fit (issue #22)
    desktop.window.show()
    shown = desktop.window.show_page("reconciliation")
    loop.run_until_complete(desktop.window.settle())
    assert isinstance(shown, Page)
    return shown


def state_of(desktop: Desktop, loop: qasync.QEventLoop, routine: str) -> RoutineState:
    view = loop.run_until_complete(desktop.service.call(lambda e: show(e.store, routine)))
    return view.routine.state


def occurrence(desktop: Desktop, loop: qasync.QEventLoop, run_id: str) -> dict[str, object]:
    found = loop.run_until_complete(desktop.service.call(lambda e: inspect(e.store, run_id)))
    return found["occurrence"]  # type: ignore[no-any-return]


def last_audit(desktop: Desktop, loop: qasync.QEventLoop, run_id: str) -> audit.AuditEntry:
    return loop.run_until_complete(
        desktop.service.call(lambda e: audit.recent(e.store, target=run_id, limit=1))
    )[0]


def click(qtbot: QtBot, loop: qasync.QEventLoop, page: Page, button: QPushButton) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(page.settle())


def answer(qtbot: QtBot, loop: qasync.QEventLoop, page: Page, *, yes: bool) -> None:
    """Answer the open confirmation with its own buttons."""
    box = page.confirmation
    assert box is not None and box.isVisible()
    if yes:
        button = next(
            b for b in box.buttons() if box.buttonRole(b) is QMessageBox.ButtonRole.AcceptRole
        )
    else:
        button = box.button(QMessageBox.StandardButton.Cancel)
    click(qtbot, loop, page, button)  # type: ignore[arg-type]
    assert not box.isVisible()


def decide(
    qtbot: QtBot, loop: qasync.QEventLoop, page: Page, button: QPushButton, reason: str
) -> None:
    qtbot.keyClicks(page.reason, reason)
    click(qtbot, loop, page, button)
    answer(qtbot, loop, page, yes=True)


def stop(qtbot: QtBot, loop: qasync.QEventLoop, page: Page) -> None:
    assert page.live_banner.isVisible()
    click(qtbot, loop, page, page.stop_button)
    answer(qtbot, loop, page, yes=True)
    assert not page.live_banner.isVisible()


def test_the_evidence_is_shown(page: Page, awaiting: Awaiting, qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    evidence = page.evidence
    assert "1 run needs your decision" in page.headline.text()
    assert page.item_model.rowCount() == 1
    assert page.shown is not None and page.shown.run_id == awaiting.run_id
    assert awaiting.run_id in page.summary.text()
    assert page.command.text() == "/bin/sh -c 'echo copying 1 of 3; exec sleep 60'"
    records = [
        evidence.journal_model.row(n).cells[2] for n in range(evidence.journal_model.rowCount())
    ]
    assert records[:3] == ["runner_started", "intent", "spawned"]
    processes = [evidence.process_model.row(n) for n in range(evidence.process_model.rowCount())]
    assert [row.cells[1] for row in processes] == ["Coven's runner", "the command"]
    assert processes[0].cells[4] == "no"  # the runner was killed
    assert processes[1].cells[4:] == ["yes, still running", "sleep 60"]  # its command outlived it
    live = processes[1]
    assert not live.bold and live.colour == page.tones.colour(Tone.WARNING).name()
    assert "copying 1 of 3" in evidence.output.toPlainText()
    tried = [evidence.tried_model.row(n).cells[0] for n in range(evidence.tried_model.rowCount())]
    assert tried[1:3] == ["Claimed to run", f"Started (runner pid {tried[2][20:-1]})"]
    assert tried[0].startswith("Started by hand by ") and tried[3].startswith("Needs your decision")
    assert not any("{" in line for line in tried)  # sentences, not JSON
    assert "ambiguous" in evidence.attempt_details.text()
    # its runner was found gone: when the command ended, no record says (it still runs)
    assert evidence.attempt_model.row(0).cells[4] == "no exit recorded"
    assert "· no exit recorded (settled " in evidence.attempt_details.text()
    for model in (page.item_model, evidence.attempt_model, evidence.process_model,
                  evidence.journal_model, evidence.tried_model):  # fmt: skip
        qtmodeltester.check(model)


def test_it_fits_1000_by_700_without_scrolling_sideways(page: Page) -> None:
    assert page.window().width() == 1000
    assert page.minimumSizeHint().width() <= page.width()
    for area in page.findChildren(QAbstractScrollArea):
        assert not area.horizontalScrollBar().isVisible(), area.accessibleName()
    attempts = page.evidence.attempts_view
    failure = attempts.model().index(0, 2).data()
    assert failure.startswith("ambiguous")
    assert attempts.columnWidth(2) >= attempts.fontMetrics().horizontalAdvance(
        "ambiguous: the runner"
    )


def test_a_live_command_is_shown_in_amber_and_blocks_every_decision(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    assert page.live_banner.isVisible()
    text = page.live_text.text()
    assert f"pid {awaiting.command_pid}" in text and "sleep 60" in text
    title = page.live_title.palette().color(page.live_title.foregroundRole())
    assert contrast(title, page.palette().color(page.backgroundRole())) >= 3
    page.verified.click()
    qtbot.keyClicks(page.reason, "nothing was copied yet")
    for button in (page.succeeded_button, page.failed_button, page.retry_button):
        assert not button.isEnabled()
        assert "Stop the command first" in button.toolTip()
        assert str(awaiting.command_pid) in button.toolTip()
    click(qtbot, loop, page, page.retry_button)  # disabled: nothing happens
    assert page.confirmation is None
    assert occurrence(desktop, loop, awaiting.run_id)["disposition"] == "recovery_required"


def test_stop_the_command_asks_first_and_keeping_it_leaves_it_running(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    """It ended a live command at one click; Cancel asked first, and so does this now."""
    click(qtbot, loop, page, page.stop_button)
    box = page.confirmation
    assert box is not None and "Stop the command of the run of" in box.text()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    answer(qtbot, loop, page, yes=False)
    assert page.live_banner.isVisible() and page.stop_button.isEnabled()
    assert psutil.pid_exists(awaiting.command_pid)
    assert occurrence(desktop, loop, awaiting.run_id)["disposition"] == "recovery_required"
    stop(qtbot, loop, page)
    assert "Stopped: " in page.stop_result.text()


def test_a_retry_is_allowed_after_stop_the_command(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    """Issue #18: a retry here used to start a second copy next to the running command."""
    qtbot.keyClicks(page.reason, "nothing was copied yet")
    stop(qtbot, loop, page)
    assert "Stopped: " in page.stop_result.text() and not page.decision_error.isVisible()
    assert not page.changed_note.isVisible()  # the person asked for the new evidence
    entry = last_audit(desktop, loop, awaiting.run_id)
    assert (entry.action, entry.why) == ("stop.result", "nothing was copied yet")
    page.verified.click()
    assert page.retry_button.isEnabled()
    click(qtbot, loop, page, page.retry_button)
    answer(qtbot, loop, page, yes=True)
    assert occurrence(desktop, loop, awaiting.run_id)["disposition"] is None  # a new attempt
    assert last_audit(desktop, loop, awaiting.run_id).action == "reconcile.retry"
    assert "to be retried" in page.decided_text.text()


def test_re_check_allows_a_decision_once_the_command_has_ended(
    page: Page, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    click(qtbot, loop, page, page.recheck_button)
    assert page.live_banner.isVisible() and "it still runs" in page.stop_result.text()
    stop_command(awaiting)  # it ends by another hand: no news reaches the engine
    click(qtbot, loop, page, page.recheck_button)
    assert not page.live_banner.isVisible()
    assert "you can decide now" in page.stop_result.text()
    assert page.failed_button.isEnabled()
    assert "the routine stays paused until you resume it" in page.failed_button.toolTip()


def test_the_page_looks_again_by_itself_when_the_command_ends(
    page: Page, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    """No Re-check needed: the command's end (a pidfd here) makes the page look again."""
    assert page.live_banner.isVisible() and not page.failed_button.isEnabled()
    with qtbot.waitSignal(page.process_ends.ended, timeout=10000):
        stop_command(awaiting)  # it ends by another hand: no news reaches the engine
    loop.run_until_complete(page.settle())  # the look it started
    assert not page.live_banner.isVisible()
    assert "you can decide now" in page.stop_result.text()
    assert page.failed_button.isEnabled()


def test_a_decision_asks_first_and_cancelling_changes_nothing(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    stop(qtbot, loop, page)
    qtbot.keyClicks(page.reason, "the copy stopped half way")
    click(qtbot, loop, page, page.failed_button)
    box = page.confirmation
    assert box is not None and box.isVisible()  # open(): the click returned, nothing waits
    assert box.windowModality() is Qt.WindowModality.WindowModal
    assert "as failed?" in box.text()
    assert box.informativeText().startswith(
        "Mark as failed: it counts as a failure; the routine stays paused until you resume it."
    )
    assert "the copy stopped half way" in box.informativeText()
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    answer(qtbot, loop, page, yes=False)
    assert occurrence(desktop, loop, awaiting.run_id)["disposition"] == "recovery_required"
    assert last_audit(desktop, loop, awaiting.run_id).action == "stop.result"  # nothing since
    assert not page.banner.isVisible()


def test_it_failed_with_a_reason_is_recorded_audited_and_pauses(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    stop(qtbot, loop, page)
    decide(qtbot, loop, page, page.failed_button, "the copy stopped half way")

    found = occurrence(desktop, loop, awaiting.run_id)
    assert (found["disposition"], found["reconciled_as"]) == ("reconciled", "failed")
    entry = last_audit(desktop, loop, awaiting.run_id)
    assert (entry.action, entry.why, entry.result) == (
        "reconcile.failed",
        "the copy stopped half way",
        "ok",
    )
    assert state_of(desktop, loop, "backup") is RoutineState.PAUSED
    assert page.banner.isVisible()
    assert "the copy stopped half way" in page.decided_text.text()
    assert f"Audit entry {entry.seq}: reconcile.failed" in page.audit_text.text()
    assert "backup is paused" in page.paused_text.text()
    assert page.item_model.rowCount() == 0  # nothing else waits

    click(qtbot, loop, page, page.resume_button)
    assert state_of(desktop, loop, "backup") is RoutineState.ACTIVE
    assert "active again" in page.paused_text.text()
    assert not page.resume_button.isVisible()


def test_after_the_decision_the_routines_and_runs_pages_say_which_way_it_went(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    """Not "Decided by a person": which way, and on the Runs page who and why."""
    stop(qtbot, loop, page)
    decide(qtbot, loop, page, page.failed_button, "the copy stopped half way")

    routines = desktop.window.show_page("routines")
    quiet(loop, desktop, routines)
    last = routines.model.index(0, routine_model.Column.LAST_RESULT)
    assert routines.model.data(last) == "Marked as failed, just now"
    runs = desktop.window.show_page("runs")
    quiet(loop, desktop, runs)
    why = runs.model.index(0, run_model.Column.WHY)
    assert (
        runs.model.data(why) == f"Marked as failed by {operator_name()}: the copy stopped half way"
    )


def test_the_receipt_stays_until_the_next_case_is_picked(
    desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    other = make_awaiting(desktop, loop, "mail")
    try:
        stop_command(awaiting)
        stop_command(other)
        page = desktop.window.show_page("reconciliation")
        loop.run_until_complete(desktop.window.settle())
        assert isinstance(page, Page) and page.item_model.rowCount() == 2
        first = page.shown
        assert first is not None
        decide(qtbot, loop, page, page.succeeded_button, "the log says done")
        assert page.banner.isVisible() and first.routine in page.decided_text.text()
        assert page.item_model.rowCount() == 1 and page.shown is None  # the receipt stands
        assert not page.detail.isVisible()
        row = page.item_view.visualRect(page.item_model.index(0, 0)).center()
        qtbot.mouseClick(page.item_view.viewport(), Qt.MouseButton.LeftButton, pos=row)
        loop.run_until_complete(page.settle())
        assert not page.banner.isVisible()  # the next case, with nothing of the last above it
        assert page.shown is not None and page.shown.routine != first.routine
        assert page.detail.isVisible()
    finally:
        stop_command(other)


def test_an_empty_reason_shows_an_error_and_changes_nothing(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    stop(qtbot, loop, page)
    qtbot.keyClicks(page.reason, "   ")
    click(qtbot, loop, page, page.succeeded_button)
    assert page.decision_error.isVisible()
    assert "Give a reason" in page.decision_error.text()
    assert page.confirmation is None or not page.confirmation.isVisible()  # stop's, answered
    assert occurrence(desktop, loop, awaiting.run_id)["disposition"] == "recovery_required"
    assert not page.banner.isVisible()


def test_retry_waits_for_the_check_box(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    stop(qtbot, loop, page)
    assert page.succeeded_button.isEnabled() and not page.retry_button.isEnabled()
    assert "verified" in page.retry_button.toolTip()
    page.verified.click()
    assert page.retry_button.isEnabled()
    decide(qtbot, loop, page, page.retry_button, "nothing was copied yet")
    found = occurrence(desktop, loop, awaiting.run_id)
    assert found["disposition"] is None  # a new attempt comes; the routine stays paused
    assert state_of(desktop, loop, "backup") is RoutineState.PAUSED


def test_evidence_that_changed_since_it_was_shown_is_refused_and_shown_again(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    attempt = loop.run_until_complete(
        desktop.service.call(lambda e: inspect(e.store, awaiting.run_id))
    )["attempts"][0]
    stop(qtbot, loop, page)
    with open(f"{attempt['attempt_dir']}/stdout", "a", encoding="utf-8") as out:
        out.write("copying 2 of 3\n")  # the evidence changes behind the page's back
    decide(qtbot, loop, page, page.succeeded_button, "it looked done")
    assert "changed since it was shown" in page.decision_error.text()
    assert occurrence(desktop, loop, awaiting.run_id)["disposition"] == "recovery_required"
    assert "copying 2 of 3" in page.evidence.output.toPlainText()  # shown as it is now
    assert page.changed_note.isVisible()


def test_a_failing_delivery_is_shown_but_not_for_a_decision(
    desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    page = desktop.window.show_page("reconciliation")
    loop.run_until_complete(desktop.window.settle())
    assert isinstance(page, Page)
    assert page.headline.text().startswith("Nothing needs your attention")
    assert not page.item_view.isVisible()
    item = Item(
        "delivery_failing", "run1", "r1@20260301T120000Z", "backup", "r1",
        "2026-03-01T12:00:00.000000Z", "succeeded", None, [], [],
        delivery_error="No space left on device",
    )  # fmt: skip
    page.show_items([item])
    assert "No space left on device" in page.summary.text()
    assert not page.failed_button.isEnabled() and not page.reason.isEnabled()
    assert not page.live_banner.isVisible()
    assert page.item_model.row(0).cells[2] == "its output to be delivered"


def test_under_a_dark_palette_the_amber_still_reads(
    page: Page,
    qapp,
    loop: qasync.QEventLoop,  # type: ignore[no-untyped-def]
) -> None:
    light = page.tones.colour(Tone.WARNING)
    qapp.setPalette(dark_palette())
    try:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.ApplicationPaletteChange)
        amber = page.tones.colour(Tone.WARNING)
        assert amber != light and amber.name() in page.live_title.styleSheet()
        window = page.palette().color(QPalette.ColorRole.Window)
        assert contrast(amber, window) >= 3
        live = page.evidence.process_model.row(1)
        assert live.colour == amber.name()  # the rows are painted again too
    finally:
        qapp.setPalette(qapp.style().standardPalette())
