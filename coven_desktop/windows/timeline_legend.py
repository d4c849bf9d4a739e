"""The timeline's legend: what each colour means, in the order a person meets them.

Each entry is a framed swatch and its words, and the entries wrap onto more lines rather
than widen the window (issue #22); a line never breaks between a swatch and its words. The
frame stands 3:1 from the window (WCAG 1.4.11), so that a band's tint — only just visible
over a lane, on purpose — still shows as a swatch here. Painted rather than rich text: a
label's text may break after an inline image and draws no borders.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPoint, QRect, QSize
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSizePolicy, QWidget

from coven_core.queries import _
from coven_desktop.windows.timeline_colours import TimelineColours, standing_out, timeline_colours


@dataclass(frozen=True)
class Entry:
    colour: QColor
    text: str


def legend_frame(palette: QPalette) -> QColor:
    """The swatches' frame: the palette's mid grey, 3:1 from the window."""
    return standing_out(
        palette.color(QPalette.ColorRole.Mid), palette.color(QPalette.ColorRole.Window)
    )


def entries(colours: TimelineColours) -> list[Entry]:
    mark, band = colours.marks, colours.bands
    return [
        Entry(mark["succeeded"], _("Succeeded")), Entry(mark["failed"], _("Failed")),
        Entry(mark["cancelled"], _("Cancelled")), Entry(mark["timed_out"], _("Timed out")),
        Entry(mark["skipped"], _("Skipped")),
        Entry(mark["recovery_required"], _("Recovery required")),
        Entry(mark["reconciled"], _("Reconciled")), Entry(mark["in_progress"], _("Running")),
        Entry(mark["shadowed"], _("Trial: decided, not started")),
        Entry(mark["planned"], _("Planned")),
        Entry(mark["planned_skipped"], _("Will be skipped (time does not exist)")),
        Entry(colours.window, _("Missed or paused window (×count)")),
        Entry(band["asleep"], _("Computer asleep")),
        Entry(band["app_not_running"], _("Coven not running")),
        Entry(colours.transition, _("Daylight-saving change")), Entry(colours.now, _("Now")),
    ]  # fmt: skip


class Legend(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.setAccessibleName(_("Legend"))
        self._read()

    def _read(self) -> None:
        self.entries = entries(timeline_colours(self.palette()))
        self.setAccessibleDescription("; ".join(entry.text for entry in self.entries))
        self.updateGeometry()
        self.update()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            self._read()
        super().changeEvent(event)

    # -- geometry: where each entry goes at a width ------------------------------------------
    def places(self, width: int) -> list[QPoint]:
        """Each entry's top left at ``width``: left to right, a new line when the next
        entry does not fit (an entry wider than the line has a line of its own)."""
        found, x, y = [], 0, 0
        gap, line = self._gap(), self._line()
        for entry in self.entries:
            wide = self._width(entry)
            if x > 0 and x + wide > width:
                x, y = 0, y + line
            found.append(QPoint(x, y))
            x += wide + gap
        return found

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        places = self.places(width)
        return (places[-1].y() if places else 0) + self._line()

    def sizeHint(self) -> QSize:
        width = 600  # about three lines at the main window's default size
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:
        widest = max((self._width(entry) for entry in self.entries), default=0)
        return QSize(widest, self.heightForWidth(widest))

    def _side(self) -> int:
        return self.fontMetrics().ascent()

    def _gap(self) -> int:
        return self.fontMetrics().horizontalAdvance("  ")

    def _line(self) -> int:
        return self.fontMetrics().lineSpacing() + 2

    def _width(self, entry: Entry) -> int:
        metrics = self.fontMetrics()
        return self._side() + metrics.horizontalAdvance(" ") + metrics.horizontalAdvance(entry.text)

    # -- painting -----------------------------------------------------------------------------
    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        frame, metrics = legend_frame(self.palette()), self.fontMetrics()
        side, line = self._side(), self._line()
        words_at = side + metrics.horizontalAdvance(" ")
        for entry, place in zip(self.entries, self.places(self.width()), strict=True):
            swatch = QRect(place.x(), place.y() + (line - side) // 2, side, side)
            painter.fillRect(swatch, frame)
            painter.fillRect(swatch.adjusted(1, 1, -1, -1), entry.colour)
            baseline = place.y() + (line - metrics.height()) // 2 + metrics.ascent()
            painter.drawText(place.x() + words_at, baseline, entry.text)
        painter.end()
