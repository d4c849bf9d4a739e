"""Every interactive widget of every page can be named by a screen reader (issue #22): a
button by its text or its accessible name, every other control by its accessible name (or the
label that is its buddy); tables leave Tab to the page."""

from __future__ import annotations

import qasync
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from coven_desktop.desktop import Desktop
from coven_desktop.windows import PAGES

CONTROLS = (QAbstractButton, QLineEdit, QComboBox, QAbstractItemView, QAbstractSpinBox,
            QTextEdit, QPlainTextEdit)  # fmt: skip


def every_page(desktop: Desktop, loop: qasync.QEventLoop) -> list[QWidget]:
    for info in PAGES:
        desktop.window.show_page(info.key)
    loop.run_until_complete(desktop.window.settle())
    return list(desktop.window.pages.values())


def unnamed(root: QWidget) -> list[str]:
    buddies = {id(label.buddy()) for label in root.findChildren(QLabel) if label.buddy()}
    found = []
    for widget in root.findChildren(QWidget):
        if not isinstance(widget, CONTROLS) or isinstance(widget, QHeaderView):
            continue  # a table's header is named with its table
        if widget.objectName().startswith("qt_") or widget.window() is not root.window():
            continue  # Qt's own parts (a corner button), popups (a completer's list)
        if isinstance(widget.parent(), (QComboBox, QLineEdit)):
            continue  # an editable box's line, a line's clear button: named with their owner
        text = widget.text() if isinstance(widget, QAbstractButton) else ""
        if not (text or widget.accessibleName() or id(widget) in buddies):
            found.append(f"{type(root).__module__}: {type(widget).__name__} {widget.objectName()}")
    return found


def test_every_control_on_every_page_has_a_name(desktop: Desktop, loop: qasync.QEventLoop) -> None:
    missing = [line for page in every_page(desktop, loop) for line in unnamed(page)]
    assert missing == []


def test_tab_leaves_every_table(desktop: Desktop, loop: qasync.QEventLoop) -> None:
    trapping = [
        f"{type(page).__module__}: {type(view).__name__}"
        for page in every_page(desktop, loop)
        for view in page.findChildren(QAbstractItemView)
        if view.tabKeyNavigation() and view.isVisibleTo(page)
    ]
    assert trapping == []
