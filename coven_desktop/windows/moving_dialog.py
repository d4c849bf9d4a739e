"""What the Import and Export windows share (DESIGN §15): a form over a summary and an error
line, a tree of routines each with its notes (what does not carry over, each DST moment that
differs), and a row of buttons; non-modal, Esc closes, reads and writes run as tasks."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from coven_core.queries import _
from coven_desktop.tasks import Tasks
from coven_desktop.windows.common import error_label
from coven_desktop.windows.tones import Tones

if TYPE_CHECKING:
    from coven_core.moving.dst_differences import DstDifference
    from coven_desktop.desktop import Desktop


class MovingDialog(QDialog):
    def __init__(self, desktop: Desktop, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desktop = desktop
        self._tasks = Tasks()
        self.setWindowTitle(title)
        self.setModal(False)
        self.resize(860, 560)

    def _lay_out(self, form: QFormLayout, tree: QTreeWidget, buttons: QHBoxLayout) -> None:
        """The form, the summary and the error line, the tree, the buttons (focus goes in
        the order they were made: form, tree, buttons)."""
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.error = error_label(self, Tones(self))
        layout.addWidget(self.error)
        self.tree = tree
        layout.addWidget(tree, 1)
        layout.addLayout(buttons)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.close)

    def _span_notes(self) -> None:
        """A note reads across every column (spanning works once an item is in the tree)."""
        for index in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(index)
            for child in range(item.childCount() if item is not None else 0):
                item.child(child).setFirstColumnSpanned(True)  # type: ignore[union-attr]

    async def settle(self) -> None:
        """Wait for the reads and writes in flight (tests)."""
        await self._tasks.settle()

    def _choices(self, labels: Iterable[str], name: str, changed: Callable[[], None]) -> QComboBox:
        """Where from, or where to: a combo box that calls ``changed`` on another choice."""
        box = QComboBox(self)
        box.addItems(list(labels))
        box.setAccessibleName(name)
        box.currentIndexChanged.connect(lambda _index: changed())
        return box

    def _with_chooser(
        self, edit: QLineEdit, choose: Callable[[], None]
    ) -> tuple[QHBoxLayout, QPushButton]:
        """A path typed in ``edit``, or picked with a Choose… button beside it."""
        button = QPushButton(_("Choose…"), self)
        button.clicked.connect(lambda _checked=False: choose())
        row = QHBoxLayout()
        row.addWidget(edit, 1)
        row.addWidget(button)
        return row, button

    def _button_row(self, main: QPushButton, *before: QWidget) -> QHBoxLayout:
        """``before`` at the left; at the right ``main``, the default, and Close."""
        row = QHBoxLayout()
        for widget in before:
            row.addWidget(widget)
        row.addStretch(1)
        main.setDefault(True)
        close = QPushButton(_("Close"), self)
        close.clicked.connect(self.close)
        row.addWidget(main)
        row.addWidget(close)
        return row


def add_notes(item: QTreeWidgetItem, notes: Iterable[str]) -> None:
    """Each note as a child row of ``item``, whole in its tooltip."""
    for note in notes:
        child = QTreeWidgetItem([note])
        child.setToolTip(0, note)
        item.addChild(child)


def moving_notes(not_carried: Iterable[str], differences: Iterable[DstDifference]) -> list[str]:
    """What does not carry over, then each DST moment that differs, in the reader's words."""
    notes = [_("Not carried over: {note}").format(note=note) for note in not_carried]
    return notes + [_("Daylight saving: {what}").format(what=d.sentence) for d in differences]
