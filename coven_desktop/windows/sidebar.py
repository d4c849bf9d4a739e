"""The main window's side bar (DESIGN §12): a page a row, each with an icon and, where
something waits for the person, a live count — the same counts the tray shows. The Welcome
row is there only while there are no routines yet.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtGui import QFont, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QListWidget, QListWidgetItem, QStyle, QWidget

from coven_core.queries import Overview, _
from coven_desktop.windows import PAGES
from coven_desktop.windows.chips import inked

SP = QStyle.StandardPixmap
#: A themed icon a page is drawn with, and the style's own where the desktop has no theme.
ICONS: dict[str, tuple[str, QStyle.StandardPixmap]] = {
    "welcome": ("help-about", SP.SP_DialogHelpButton),
    "routines": ("view-list-details", SP.SP_FileDialogDetailedView),
    "runs": ("view-history", SP.SP_FileDialogContentsView),
    "timeline": ("view-calendar", SP.SP_ArrowRight),
    "reconciliation": ("dialog-warning", SP.SP_MessageBoxWarning),
    "quarantine": ("dialog-error", SP.SP_MessageBoxCritical),
    "diagnostics": ("utilities-system-monitor", SP.SP_ComputerIcon),
}
#: Fallbacks the style draws as a bare black glyph, not a picture with colours of its own.
GLYPHS = frozenset({"timeline"})


def counted(overview: Overview) -> dict[str, int]:
    """The count a row shows: what waits on that page for the person."""
    counts = overview.counts
    return {
        "reconciliation": counts.attention,
        "quarantine": counts.quarantined,
        "runs": counts.failed_unseen,
        "routines": counts.broken,
    }


class SideBar(QListWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedWidth(190)
        self.setIconSize(QSize(18, 18))
        self.setAccessibleName(_("Pages"))
        self.titles = [_(info.title) for info in PAGES]
        for info, title in zip(PAGES, self.titles, strict=True):
            item = QListWidgetItem(self._icon(info.key), title)
            item.setToolTip(title)
            self.addItem(item)
        self.counts: dict[str, int] = {}
        self.has_routines = False

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:  # a glyph is inked in the palette's text
            for row, info in enumerate(PAGES):
                item = self.item(row)
                if item is not None and info.key in GLYPHS:
                    item.setIcon(self._icon(info.key))

    def _icon(self, page: str) -> QIcon:
        """The theme's icon; else the style's, where a bare glyph (the Timeline's arrow) is
        inked in the palette's text colour: drawn black, it vanished on a dark palette."""
        theme, fallback = ICONS[page]
        if QIcon.hasThemeIcon(theme):
            return QIcon.fromTheme(theme)
        icon = QApplication.style().standardIcon(fallback)
        if page not in GLYPHS:
            return icon
        size = self.iconSize().width()
        return QIcon(inked(icon, self.palette().color(QPalette.ColorRole.WindowText), size))

    def show_counts(self, overview: Overview) -> None:
        """Each row's count (bold while it is more than zero); Welcome while no routine."""
        self.counts = counted(overview)
        for row, (info, title) in enumerate(zip(PAGES, self.titles, strict=True)):
            item = self.item(row)
            if item is None:
                continue
            count = self.counts.get(info.key, 0)
            item.setText(f"{title}  ({count})" if count else title)
            font = QFont(item.font())
            font.setBold(count > 0)
            item.setFont(font)
        self.has_routines = bool(overview.routines)
        self.follow_welcome()

    def follow_welcome(self) -> None:
        """The Welcome row, while there is no routine (or while it is the page shown)."""
        item = self.item(0)
        if item is not None:
            item.setHidden(self.has_routines and self.currentRow() != 0)
