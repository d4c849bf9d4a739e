"""The DST explanation window (issue #8): for a routine and for one occurrence, non-modal,
loaded through the engine's explanation, in en_US and de_DE."""

from __future__ import annotations

import asyncio

import qasync
from PySide6.QtWidgets import QLabel, QWidget

from coven_desktop.desktop import Desktop
from coven_desktop.windows.explanation import ExplanationWindow, open_explanation
from tests.desktop.windows.conftest import on_signal


def opened(desktop: Desktop, loop: qasync.QEventLoop, *args: str | None) -> ExplanationWindow:
    window = open_explanation(desktop, *args)  # type: ignore[arg-type]
    assert isinstance(window, ExplanationWindow)
    loop.run_until_complete(asyncio.wait_for(on_signal(loop, window.loaded), 20))
    return window


def field_texts(window: QWidget) -> list[str]:
    return [label.text() for label in window.findChildren(QLabel)]


def gap_id(desktop: Desktop, loop: qasync.QEventLoop) -> str:
    sql = "SELECT id FROM occurrences WHERE local_kind = 'nonexistent'"
    return loop.run_until_complete(
        desktop.service.call(lambda e: e.store.conn.execute(sql).fetchone()[0])
    )


def test_a_routine_s_window_gives_its_next_run_and_next_year_s_changes(
    seeded_desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    window = opened(seeded_desktop, loop, "nightly")
    assert window.isWindow() and window.isVisible() and not window.isModal()
    assert window.heading.text() == "nightly"
    assert window.outcome.text().startswith("It will run next at 2:30")
    assert "is an ordinary time in New York (UTC\u22124)" in window.sentence.text()
    texts = field_texts(window)
    assert "New York (America/New_York)" in texts and "UTC\u22124 (Eastern Daylight Time)" in texts
    assert window.changes.text().startswith("On Sunday, November 1, 2026 clocks in New York go")
    assert window.details.topLevelItemCount() == 5  # the next moments, each with its sentence


def test_an_occurrence_s_window_explains_the_gap_and_shows_the_inspection(
    seeded_desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    oid = gap_id(seeded_desktop, loop)
    window = opened(seeded_desktop, loop, "nightly", oid)
    assert window.sentence.text().replace("\u202f", " ") == (
        "2:30 AM on Sunday, March 8, 2026 does not exist in New York: clocks jump from 2:00 AM "
        "to 3:00 AM. This run was skipped (Coven never moves a run to another time)."
    )
    assert window.outcome.text() == "It was skipped (the time does not exist)."
    top = [window.details.topLevelItem(i).text(0) for i in range(4)]
    assert top == ["occurrence", "attempts", "delivery", "decisions"]
    loop.run_until_complete(window.reload())  # the page contract: reload again at will
    assert "does not exist" in window.sentence.text()


def test_in_german_dates_and_zone_names_are_german(
    seeded_desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    seeded_desktop.locale = "de_DE"
    window = opened(seeded_desktop, loop, "nightly", gap_id(seeded_desktop, loop))
    texts = field_texts(window)
    assert "02:30 am Sonntag, 8. März 2026" in texts
    assert "UTC\u22125 (Nordamerikanische Ostküsten-Normalzeit)" in texts
    assert "die Uhren springen von 02:00 auf 03:00" in window.sentence.text()


def test_an_unknown_occurrence_says_so_instead_of_failing(
    seeded_desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    window = open_explanation(seeded_desktop, "nightly", "nope")
    assert isinstance(window, ExplanationWindow)
    loop.run_until_complete(asyncio.wait_for(on_signal(loop, window.failed), 20))
    assert window.sentence.text() == "no occurrence or run 'nope' (see: coven history NAME)"


def test_esc_closes_it(seeded_desktop: Desktop, loop: qasync.QEventLoop, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    window = opened(seeded_desktop, loop, "nightly")
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    qtbot.keyClick(window.details, Qt.Key.Key_Escape)
    assert not window.isVisible()
