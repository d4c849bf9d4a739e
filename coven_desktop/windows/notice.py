"""A notice on a page (issue #22): a tinted line that says what went wrong and offers the way
out as buttons — never a command to type in a terminal — and goes away by itself: when the
person picks something else, acts again, closes it, or after a while.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from coven_core.queries import _
from coven_desktop.windows.tones import Tone, Tones

#: How long a notice stays unless the person acts on it first (milliseconds).
LINGER_MS = 20_000


class Notice(QFrame):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.tones = Tones(parent)  # the page: a style sheet on the frame itself would loop
        self.tones.banner(self, Tone.WARNING)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 4, 4)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        row.addWidget(self.label, 1)
        self.buttons: list[QPushButton] = []
        self._row = row
        close = QToolButton(self)
        close.setText("×")
        close.setAccessibleName(_("Close the notice"))
        close.setAutoRaise(True)
        close.clicked.connect(self.clear)
        row.addWidget(close)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.clear)
        self.hide()

    def say(self, text: str, actions: tuple[tuple[str, Callable[[], object]], ...] = ()) -> None:
        """Show ``text`` with a button for each ``(label, act)``; an act clears the notice."""
        self.clear()
        self.label.setText(text)
        for label, act in actions:
            button = QPushButton(label, self)
            button.clicked.connect(lambda _checked=False, act=act: self._take(act))
            self._row.insertWidget(self._row.count() - 1, button)
            self.buttons.append(button)
        self.show()
        self._timer.start(LINGER_MS)

    def _take(self, act: Callable[[], object]) -> None:
        self.clear()
        act()

    def clear(self) -> None:
        self._timer.stop()
        for button in self.buttons:
            button.deleteLater()
        self.buttons = []
        self.label.clear()
        self.hide()

    def text(self) -> str:
        return self.label.text()
