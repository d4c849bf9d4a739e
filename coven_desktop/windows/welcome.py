"""The Welcome window: the first thing a person sees while there are no routines (issue #10).

No wizard and nothing modal — the tray keeps working. One button opens the Routines window's
editor filled with an example (a daily backup at 02:30) to change or save; the page also
says where Coven keeps its data, and that the folder is private (DESIGN §13).
"""

from __future__ import annotations

from datetime import time
from typing import TYPE_CHECKING

from babel.dates import format_time
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from coven_core.queries import _
from coven_desktop.windows.import_dialog import ImportDialog
from coven_desktop.windows.routine_editor import example_command

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

#: The example: a routine people want and understand at once.
EXAMPLE_NAME = "backup"
EXAMPLE_SCHEDULE = "30 2 * * *"
EXAMPLE_TIME = time(2, 30)


class Page(QWidget):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desktop = desktop
        self.command = example_command()
        layout = QVBoxLayout(self)
        layout.setAlignment(Qt.AlignmentFlag.AlignTop)
        for label in (self._title(), self._intro(), self._example(), self._command()):
            layout.addWidget(label)
        self.add_first = QPushButton(_("Add your first routine"), self)
        self.add_first.clicked.connect(self.add_first_routine)
        layout.addWidget(self.add_first, 0, Qt.AlignmentFlag.AlignLeft)
        self.import_them = QPushButton(
            _("Or bring your routines from cron, systemd or launchd…"), self
        )
        self.import_them.setFlat(True)  # the second way in, quieter than the first
        self.import_them.clicked.connect(self.open_import)
        layout.addWidget(self.import_them, 0, Qt.AlignmentFlag.AlignLeft)
        self.importer: ImportDialog | None = None
        self.data_dir = self._text(self._data_dir_text())
        layout.addWidget(self.data_dir)

    def _text(self, text: str) -> QLabel:
        label = QLabel(text, self)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    def _title(self) -> QLabel:
        title = self._text(_("Welcome to Coven"))
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.5)
        font.setBold(True)
        title.setFont(font)
        return title

    def _intro(self) -> QLabel:
        return self._text(_(
            "Coven runs your routines on time — across sleep, daylight-saving changes, "
            "crashes and restarts — and tells you what happened to every scheduled moment. "
            "It lives in the system tray; closing this window keeps it running."
        ))  # fmt: skip

    def _example(self) -> QLabel:
        at = format_time(EXAMPLE_TIME, format="short", locale=self.desktop.locale)
        return self._text(_("For example, a backup every day at {time}:").format(time=at))

    def _command(self) -> QLabel:
        command = self._text(self.command)
        command.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        command.setContentsMargins(16, 0, 0, 0)
        return command

    def _data_dir_text(self) -> str:
        return _(
            "Your routines and their history are kept in {path}, a folder only you can "
            "read (its permissions are 0700)."
        ).format(path=self.desktop.data_dir)

    def add_first_routine(self) -> None:
        """Show the Routines window with its editor holding the example."""
        page = self.desktop.window.show_page("routines")
        open_editor = getattr(page, "open_editor", None)
        if open_editor is not None:  # the Routines window has an editor (issue #8)
            open_editor(name=EXAMPLE_NAME, schedule=EXAMPLE_SCHEDULE, command=self.command)

    def open_import(self) -> ImportDialog:
        """The Import window, non-modal; one at a time."""
        if self.importer is None:
            self.importer = ImportDialog(self.desktop, self)
            self.importer.imported.connect(self._show_imported)
        self.importer.show()
        self.importer.raise_()
        return self.importer

    def _show_imported(self, names: list[str]) -> None:
        """The routines are there now: the window goes where they are, the first one chosen
        (the Import window stays open, with what it created)."""
        page = self.desktop.window.show_page("routines")
        show_routine = getattr(page, "show_routine", None)
        if show_routine is not None and names:
            show_routine(names[0])

    async def reload(self) -> None:
        pass  # nothing on this page changes with the store
