"""The demo's pictures of the tray: its tooltip over its menu, with a submenu open beside it.

``tray-menu.png`` opens the submenu of a routine in trouble (quarantined, else paused), and
``tray-notifications.png`` the switches for each kind of notification. The menu is drawn as
the app built it from the demo store; the tooltip as the icon carries it.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QPoint
from PySide6.QtGui import QAction, QPainter, QPalette, QPixmap
from PySide6.QtWidgets import QFrame, QLabel, QMenu

from coven_desktop.desktop import Desktop

#: The pictures :func:`render_tray` writes, by name.
TRAY_PICTURES = ("tray-menu", "tray-notifications")

_GAP = 8


def render_tray(desktop: Desktop, out: Path) -> list[Path]:
    menu = desktop.tray.menu
    submenus = _submenus(menu)
    return [
        _save(_picture(desktop, menu, *_troubled_routine(submenus)), out / "tray-menu.png"),
        _save(_picture(desktop, menu, *_named(submenus, "notifications")),
              out / "tray-notifications.png"),
    ]  # fmt: skip


def _submenus(menu: QMenu) -> list[tuple[QAction, QMenu]]:
    """Each item that opens a submenu, with that submenu (its object name says what it is)."""
    return [(action, sub) for action in menu.actions() if isinstance(sub := action.menu(), QMenu)]


def _named(submenus: list[tuple[QAction, QMenu]], name: str) -> tuple[QAction, QMenu]:
    return next((action, sub) for action, sub in submenus if sub.objectName() == name)


def _troubled_routine(submenus: list[tuple[QAction, QMenu]]) -> tuple[QAction, QMenu]:
    """A quarantined routine's submenu (Probe once, Release), else a paused one's, else any."""
    routines = [(a, sub) for a, sub in submenus if sub.objectName().startswith("routine:")]
    for wanted in ("Probe once", "Resume"):
        for action, sub in routines:
            sub.aboutToShow.emit()  # filled when it opens
            if any(item.text() == wanted for item in sub.actions()):
                return action, sub
    return routines[0]


def _picture(desktop: Desktop, menu: QMenu, opened: QAction, submenu: QMenu) -> QPixmap:
    """The tooltip, the menu under it with ``opened`` highlighted, its submenu beside it."""
    tip = _tooltip(desktop.tray.icon.toolTip())
    top = _grab(menu, opened)
    side = _grab(submenu, None)
    row = menu.actionGeometry(opened).top()
    tip_height = tip.height() + _GAP
    width = max(tip.width(), top.width() + side.width())
    height = max(tip_height + top.height(), tip_height + row + side.height())
    picture = QPixmap(width + 2 * _GAP, height + 2 * _GAP)
    picture.fill(menu.palette().color(QPalette.ColorRole.Window).darker(115))
    painter = QPainter(picture)
    painter.drawPixmap(_GAP, _GAP, tip)
    painter.drawPixmap(_GAP, _GAP + tip_height, top)
    painter.drawPixmap(_GAP + top.width() - 2, _GAP + tip_height + row, side)
    painter.end()
    return picture


def _grab(menu: QMenu, active: QAction | None) -> QPixmap:
    menu.popup(QPoint(0, 0))
    if active is not None:
        menu.setActiveAction(active)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    image = menu.grab()
    menu.hide()
    return image


def _tooltip(text: str) -> QPixmap:
    label = QLabel(text)
    label.setFrameShape(QFrame.Shape.Box)
    label.setMargin(6)
    palette = label.palette()
    palette.setColor(QPalette.ColorRole.Window, palette.color(QPalette.ColorRole.ToolTipBase))
    palette.setColor(QPalette.ColorRole.WindowText, palette.color(QPalette.ColorRole.ToolTipText))
    label.setPalette(palette)
    label.setAutoFillBackground(True)
    label.adjustSize()
    image = label.grab()
    label.deleteLater()
    return image


def _save(picture: QPixmap, path: Path) -> Path:
    if picture.isNull() or not picture.save(str(path), "PNG"):
        raise OSError(f"could not write {path}")
    return path
