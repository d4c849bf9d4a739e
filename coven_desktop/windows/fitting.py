"""A table whose columns always fit its width (issue #22: no page scrolls sideways at
1000 × 700): each column as wide as its text up to a cap; when they do not fit, the columns a
person needs least give way first, down to a minimum, and elide (their tooltips say it all);
the last column takes what is left. Where even that would cut the columns that give way to
less than a readable width (a table beside an editor), the columns it can do without are
dropped, the first the first, and come back when there is room.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QHeaderView, QTableView, QWidget

#: No column shrinks below this (pixels), whatever the width.
NARROWEST = 56
#: A column that gives way still reads at this width ("tomorrow 2:30…"); rather than cut
#: the give-way columns below it, the table drops columns.
READABLE = 110


class FittingTable(QTableView):
    def __init__(
        self,
        parent: QWidget,
        *,
        caps: Mapping[Any, int] | None = None,
        give_way: Sequence[int] = (),
        drop: Sequence[int] = (),
    ) -> None:
        """``caps``: the widest a column starts; ``give_way``: the columns that shrink when
        the rest do not fit, the first the first; ``drop``: the columns hidden, the first the
        first, when shrinking would leave those that give way less than half their width."""
        super().__init__(parent)
        self.caps, self.give_way, self.drop = dict(caps or {}), list(give_way), list(drop)
        self._wanted: list[int] = []  # each column's width for its content, capped
        self.dropped: set[int] = set()  # hidden for want of room (the owner hides others)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # One line a row, elided at the column's edge (the tooltips have the whole text):
        # wrapped at a space, a cell showed only its first words ("fetchmail: …") and hid
        # the rest below the row's height.
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.horizontalHeader()
        header.setTextElideMode(Qt.TextElideMode.ElideRight)  # "Wiederher…", not its middle
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)  # fit() sizes the last one: it sees the scroll bar
        # Measure the rows in view, not Qt's default first thousand: measuring made most of
        # the Routines page's first paint (bench_routines_page, "its reload"). A wider row
        # further down elides, its tooltip whole, like any cell past its column's cap.
        header.setResizeContentsPrecision(0)

    def fit_to_contents(self) -> None:
        """Measure the columns' contents again (after new rows), then fit."""
        with self._resizing():
            for column in self.dropped:  # measured as if shown: it comes back when there is room
                self.setColumnHidden(column, False)
            self.dropped.clear()
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
        with self._resizing():
            self._share_out(widths)

    def _share_out(self, widths: list[int]) -> None:
        self._drop_for_room(widths)
        shown = [c for c, width in enumerate(widths) if width]
        last = shown[-1] if shown else len(widths) - 1
        # the last column gets at least NARROWEST below: counted so here, or a last column
        # whose words are narrower (a short header, empty cells) ran the others past the edge
        widths[last] = max(widths[last], NARROWEST)
        excess = sum(widths) - self.viewport().width()
        others = [c for c in shown if c not in self.give_way and c != last]
        for group in (self.give_way, others):
            excess = _shrink(widths, group, excess)
        widths[last] = max(self.viewport().width() - sum(widths) + widths[last], NARROWEST)
        for column, width in enumerate(widths):  # the last one takes what is left
            if not self.isColumnHidden(column):
                self.setColumnWidth(column, width)

    @contextmanager
    def _resizing(self) -> Iterator[None]:
        """Columns resized as one change, painted once.

        Qt repaints the table later for two things a reload starts: each resized column (from
        a zero timer in ``QTableView::columnResized``) and the items' layout after new rows
        (``doDelayedItemsLayout``). Both fire after the first paint of the new rows, so every
        reload painted 1,000 rows twice (bench_routines_page: "its reload"). With the header
        quiet and the layout done now, the view is updated once, after."""
        header = self.horizontalHeader()
        if header.signalsBlocked():  # within an outer change (fit inside fit_to_contents)
            yield
            return
        header.blockSignals(True)
        try:
            yield
        finally:
            header.blockSignals(False)
            self.executeDelayedItemsLayout()
            self.updateGeometries()
            self.viewport().update()

    def _drop_for_room(self, widths: list[int]) -> None:
        """Hide the columns of ``drop`` that must go (their width becomes 0), show again
        those that fit now."""
        dropped: set[int] = set()
        for column in self.drop:
            if self._least(widths) <= self.viewport().width():
                break
            dropped.add(column)
            widths[column] = 0
        for column in dropped ^ self.dropped:
            self.setColumnHidden(column, column in dropped)
        self.dropped = dropped

    def _least(self, widths: list[int]) -> int:
        """The width the columns need with those that give way still readable."""
        return sum(min(w, READABLE) if c in self.give_way else w for c, w in enumerate(widths))

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
