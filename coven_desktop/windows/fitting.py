"""A table whose columns always fit its width (issue #22: no page scrolls sideways at
1000 × 700): each column as wide as its text up to a cap; when they do not fit, the columns a
person needs least give way first, down to a minimum, and elide (their tooltips say it all);
the last column takes what is left.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QHeaderView, QTableView, QWidget

#: No column shrinks below this (pixels), whatever the width.
NARROWEST = 56


class FittingTable(QTableView):
    def __init__(
        self,
        parent: QWidget,
        *,
        caps: Mapping[Any, int] | None = None,
        give_way: Sequence[int] = (),
    ) -> None:
        """``caps``: the widest a column starts; ``give_way``: the columns that shrink when
        the rest do not fit, the first the first."""
        super().__init__(parent)
        self.caps, self.give_way = dict(caps or {}), list(give_way)
        self._wanted: list[int] = []  # each column's width for its content, capped
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)  # fit() sizes the last one: it sees the scroll bar

    def fit_to_contents(self) -> None:
        """Measure the columns' contents again (after new rows), then fit."""
        self.resizeColumnsToContents()
        columns = self.model().columnCount() if self.model() is not None else 0
        self._wanted = [self._want(c) for c in range(columns)]
        self.fit()

    def _want(self, column: int) -> int:
        if self.isColumnHidden(column):
            return 0
        width = self.columnWidth(column)
        return min(width, int(self.caps.get(column, width)))

    def fit(self) -> None:
        """Share the width out: wanted widths; when they do not fit, the give-way columns
        shrink in proportion to what each can spare, then (if still needed) the others."""
        widths = list(self._wanted)
        if not widths:
            return
        excess = sum(widths) - self.viewport().width()
        others = [c for c in range(len(widths) - 1) if c not in self.give_way]
        for group in (self.give_way, others):
            excess = _shrink(widths, group, excess)
        last = len(widths) - 1
        widths[last] = max(self.viewport().width() - sum(widths[:last]), NARROWEST)
        for column, width in enumerate(widths):  # the last one takes what is left
            if not self.isColumnHidden(column):
                self.setColumnWidth(column, width)

    def viewportEvent(self, event: QEvent) -> bool:
        """The viewport changed size (the window, or a vertical scroll bar came or went)."""
        handled = super().viewportEvent(event)
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return handled


def _shrink(widths: list[int], columns: Sequence[int], excess: int) -> int:
    """Take ``excess`` pixels from ``columns``, each in proportion to what it can spare
    above :data:`NARROWEST`; what is still missing."""
    spare = {c: max(widths[c] - NARROWEST, 0) for c in columns}
    total = sum(spare.values())
    if excess <= 0 or total == 0:
        return excess
    share = min(excess / total, 1.0)
    for column, room in spare.items():
        taken = min(room, math.ceil(room * share))  # rounded up: never short of room
        widths[column] -= taken
        excess -= taken
    return max(excess, 0)
