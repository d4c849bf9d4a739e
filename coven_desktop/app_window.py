"""The main window (the Routines, Timeline and other windows arrive with issue #8)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QLabel, QMainWindow, QVBoxLayout, QWidget

import coven_core
from coven_core.overview import Overview
from coven_core.tz import tzdb
from coven_desktop.resources import icon

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

APP_NAME = "Coven Desktop"


class MainWindow(QMainWindow):
    def __init__(self, desktop: Desktop | None = None) -> None:
        super().__init__()
        self.setWindowTitle(APP_NAME)
        self.setWindowIcon(QIcon(str(icon("coven"))))
        body = QWidget(self)
        layout = QVBoxLayout(body)
        self.headline = QLabel(self.tr("Coven keeps your routines running on time."), body)
        self.summary = QLabel("", body)
        self.engine_info = QLabel(
            self.tr("Engine {version} · tz database {tzdb}").format(
                version=coven_core.__version__, tzdb=tzdb.active()
            ),
            body,
        )
        for label in (self.headline, self.summary, self.engine_info):
            label.setAlignment(Qt.AlignmentFlag.AlignCenter)
            layout.addWidget(label)
        self.setCentralWidget(body)
        self.resize(520, 280)
        if desktop is not None:
            desktop.overviewChanged.connect(self.show_overview)

    def show_overview(self, overview: Overview) -> None:
        parts = [self.tr("State: {state}").format(state=overview.state.value)]
        if overview.standby:
            parts.append(self.tr("standby — another Coven process is scheduling"))
        parts.append(self.tr("{count} routine(s)").format(count=len(overview.routines)))
        self.summary.setText(" · ".join(parts))
