"""``coven-desktop``: the tray application's entry point.

For now a main window that says what Coven is and which engine it runs; the tray, the worker
thread and the windows arrive with their issues.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QMainWindow, QVBoxLayout, QWidget

import coven_core
from coven_core.tz import tzdb

APP_NAME = "Coven Desktop"


class MainWindow(QMainWindow):
    """The main window (placeholder until the Routines window lands)."""

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle(APP_NAME)
        body = QWidget(self)
        layout = QVBoxLayout(body)
        self.headline = QLabel(self.tr("Coven keeps your routines running on time."), body)
        self.engine_info = QLabel(
            self.tr("Engine {version} · tz database {tzdb}").format(
                version=coven_core.__version__, tzdb=tzdb.active()
            ),
            body,
        )
        for label in (self.headline, self.engine_info):
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            layout.addWidget(label)
        self.setCentralWidget(body)
        self.resize(480, 240)


def main(argv: Sequence[str] | None = None) -> int:
    app = QApplication(list(argv if argv is not None else sys.argv))
    app.setApplicationName(APP_NAME)
    window = MainWindow()
    window.show()
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
