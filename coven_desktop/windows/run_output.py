"""A run detail's Output tab: the end of the run's standard output and standard error, a
search over both (every match highlighted, Enter goes to the next), and buttons that open
each file, or its folder, with the desktop's own application (QDesktopServices)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QFontDatabase, QPalette, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from coven_core.queries import OutputTail, _

#: Matches highlighted at most per stream: a search for "e" in 64 KiB stays quick.
MOST_HIGHLIGHTS = 1000


class Stream(QWidget):
    """One captured stream: its name and file, Open file / Open folder, and its text."""

    def __init__(self, title: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.title = title
        self.path: str | None = None
        self.heading = QLabel(title, self)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_file = QPushButton(_("Open file"), self)
        self.open_file.setAccessibleName(_("Open the file of {stream}").format(stream=title))
        self.open_file.clicked.connect(lambda: self._open(folder=False))
        self.open_folder = QPushButton(_("Open folder"), self)
        self.open_folder.setAccessibleName(_("Open the folder of {stream}").format(stream=title))
        self.open_folder.clicked.connect(lambda: self._open(folder=True))
        self.text = QPlainTextEdit(self)
        self.text.setReadOnly(True)
        self.text.setAccessibleName(title)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlaceholderText(_("Nothing written yet."))
        self._layout()

    def _layout(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        line = QHBoxLayout()
        line.addWidget(self.heading, 1)
        line.addWidget(self.open_file)
        line.addWidget(self.open_folder)
        layout.addLayout(line)
        layout.addWidget(self.text, 1)

    def show_tail(self, tail: OutputTail, live: bool = False) -> None:
        """The stream's end; while the run is ``live``, an empty one is not yet over."""
        self.text.setPlaceholderText(
            _("Nothing written yet.") if live else _("Nothing was written.")
        )
        self.path = tail.path
        heading = self.title
        if tail.truncated:
            heading = _("{stream} (the end of it; the file has it all)").format(stream=self.title)
        self.heading.setText(heading)
        self.heading.setToolTip(tail.path or "")
        if self.text.toPlainText() != tail.text:
            self.text.setPlainText(tail.text)
            self.text.moveCursor(QTextCursor.MoveOperation.End)  # the end is where news is
        self.open_file.setEnabled(tail.path is not None and tail.on_disk)
        self.open_folder.setEnabled(tail.path is not None)

    def _open(self, *, folder: bool) -> None:
        if self.path is None:
            return
        target = Path(self.path).parent if folder else Path(self.path)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(target)))

    def highlight(self, needle: str) -> int:
        """Mark every match of ``needle`` (case-insensitive); how many there are."""
        marks: list[QTextEdit.ExtraSelection] = []
        document = self.text.document()
        cursor = QTextCursor(document)
        palette = self.palette()
        while needle and len(marks) < MOST_HIGHLIGHTS:
            cursor = document.find(needle, cursor)
            if cursor.isNull():
                break
            mark = QTextEdit.ExtraSelection()
            mark.cursor = cursor
            mark.format.setBackground(palette.color(QPalette.ColorRole.Highlight))
            mark.format.setForeground(palette.color(QPalette.ColorRole.HighlightedText))
            marks.append(mark)
        self.text.setExtraSelections(marks)
        return len(marks)

    def find_next(self, needle: str, from_start: bool) -> bool:
        """Select the next match after the cursor (or from the start); False if none."""
        if from_start:
            self.text.moveCursor(QTextCursor.MoveOperation.Start)
        return self.text.find(needle, QTextDocument.FindFlag(0))


class OutputPane(QWidget):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText(_("Search the output"))
        self.search.setAccessibleName(_("Search the output"))
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._on_search)
        self.search.returnPressed.connect(self.find_next)
        self.matches = QLabel(self)
        self.stdout = Stream(_("Standard output"), self)
        self.stderr = Stream(_("Standard error"), self)
        layout = QVBoxLayout(self)
        line = QHBoxLayout()
        line.addWidget(self.search, 1)
        line.addWidget(self.matches)
        layout.addLayout(line)
        streams = QSplitter(Qt.Orientation.Vertical, self)
        streams.addWidget(self.stdout)
        streams.addWidget(self.stderr)
        layout.addWidget(streams, 1)
        self._current = 0  # the stream the last match was found in

    def show_output(self, stdout: OutputTail, stderr: OutputTail, live: bool = False) -> None:
        self.stdout.show_tail(stdout, live)
        self.stderr.show_tail(stderr, live)
        self._on_search(self.search.text())

    def _on_search(self, needle: str) -> None:
        found = sum(stream.highlight(needle) for stream in (self.stdout, self.stderr))
        if not needle:
            self.matches.setText("")
        elif found:
            self.matches.setText(_("{count} found").format(count=found))
        else:
            self.matches.setText(_("Not found"))
        self._current = 0
        if found:
            self.find_next(from_start=True)

    def find_next(self, from_start: bool = False) -> None:
        """Select the next match, in standard output then standard error, round again."""
        needle, streams = self.search.text(), (self.stdout, self.stderr)
        if not needle:
            return
        # this stream's rest, then the other stream, then this one again from its start
        order = (self._current, 1 - self._current, self._current)
        for step, index in enumerate(order):
            if streams[index].find_next(needle, from_start=from_start or step > 0):
                self._current = index
                return
