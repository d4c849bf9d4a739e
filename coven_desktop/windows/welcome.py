"""The Welcome window (placeholder: replaced by its issue's work)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop


class Page(QWidget):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desktop = desktop
        QVBoxLayout(self).addWidget(QLabel(self.tr("Welcome"), self))

    async def reload(self) -> None:
        pass
