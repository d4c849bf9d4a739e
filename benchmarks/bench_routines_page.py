"""The Routines page with 1,000 routines against a bare QTableView over the same rows, in one
run (issue #24; goal: at most 2× the bare view's time).

ours:     the real page (``coven_desktop.windows.routines.Page``) of the real app, started on
          a store with 1,000 daily routines (four zones, a day of history each: a last result
          and a next run), under a virtual clock, on a qasync loop.
baseline: a bare QWidget holding a QLineEdit over a QTableView, its rows a QStandardItemModel
          of the same 1,000 × 6 texts the page shows, behind a QSortFilterProxyModel (sorted by
          name, as the page is; the line edit sets Qt's own case-insensitive filter).

first paint: from nothing to the page painted: ours builds the page, reloads it as the main
          window does when it is first shown (the rows read on the operator thread, set,
          columns fitted to their contents) and paints it, its caches of words (schedules,
          zone names) emptied first, as at the app's first opening of the window (the
          engine's own, of decoded revisions, are as its start left them: its first pass
          reads every routine); the baseline builds its model and view and paints them.
          Both are shown (offscreen) and rendered into a 1000 × 680 QImage, the main
          window's size; the page is freed between rounds.
filter keystroke: one character typed into the filter (alternately added and taken away:
          ``sync`` ↔ ``syn``, each keeping an eighth of the rows) and the table painted again.

Interleaved A B A B, medians; ratio = ours / baseline, lower is better. Info rows break our
first paint down: building the page, its reload (read, set, fitted), the paint.

Run: python3 benchmarks/bench_routines_page.py [--rounds N] [--json PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QCoreApplication, QEvent, QSortFilterProxyModel, Qt
from PySide6.QtGui import QImage, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QLineEdit, QTableView, QVBoxLayout, QWidget

from benchmarks.harness import (
    Figure,
    cost_figure,
    info_figure,
    interleaved,
    print_table,
    scratch,
    write_json,
)
from benchmarks.virtual_desktop import (
    SteppedLoop,
    daily_at_spread_times,
    make_store,
    running_desktop,
)
from coven_core.clock import VirtualClock
from coven_desktop.desktop import Desktop
from coven_desktop.windows.routine_rows import schedule_words, zone_label
from coven_desktop.windows.routines import Page

ROUTINES = 1000
NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
SIZE = (1000, 680)  # the main window's
NEEDLES = ("sync", "syn")  # one keystroke apart; each keeps an eighth of the names
TARGET = 2.0
BARE = "bare QTableView, same rows"


class BareTable(QWidget):
    """The baseline: a line edit over a table view, the same texts, Qt's own filter."""

    def __init__(self, texts: list[list[str]], parent: QWidget) -> None:
        super().__init__(parent)
        model = QStandardItemModel(len(texts), len(texts[0]) if texts else 0, self)
        for row, cells in enumerate(texts):
            for column, text in enumerate(cells):
                model.setItem(row, column, QStandardItem(text))
        self.shown = QSortFilterProxyModel(self)
        self.shown.setSourceModel(model)
        self.shown.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.shown.setFilterKeyColumn(-1)  # any column
        self.filter = QLineEdit(self)
        self.filter.textChanged.connect(self.shown.setFilterFixedString)
        self.table = QTableView(self)
        self.table.setModel(self.shown)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.table, 1)


@dataclass
class Breakdown:
    """Our first paint's parts, seconds per round."""

    build: list[float] = field(default_factory=list)
    reload: list[float] = field(default_factory=list)
    paint: list[float] = field(default_factory=list)


def window() -> QWidget:
    """The window both sides are shown in, as the main window holds its pages (shown once:
    each round shows a child, not a new window)."""
    host = QWidget()
    host.resize(*SIZE)
    host.show()
    return host


def shown(widget: QWidget) -> None:
    widget.resize(*SIZE)
    widget.show()


def painted(widget: QWidget) -> None:
    image = QImage(*SIZE, QImage.Format.Format_ARGB32_Premultiplied)
    widget.render(image)


def freed(widget: QWidget) -> None:
    widget.hide()
    widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


async def page_first_paint(desktop: Desktop, host: QWidget, parts: Breakdown) -> float:
    schedule_words.cache_clear()  # from nothing: as the window is first opened
    zone_label.cache_clear()
    began = time.perf_counter()
    page = Page(desktop, host)
    shown(page)
    built = time.perf_counter()
    await page.reload()
    loaded = time.perf_counter()
    painted(page)
    done = time.perf_counter()
    parts.build.append(built - began)
    parts.reload.append(loaded - built)
    parts.paint.append(done - loaded)
    freed(page)
    return done - began


def bare_first_paint(texts: list[list[str]], host: QWidget) -> float:
    began = time.perf_counter()
    bare = BareTable(texts, host)
    shown(bare)
    painted(bare)
    elapsed = time.perf_counter() - began
    freed(bare)
    return elapsed


def keystrokes(line: QLineEdit, table: QWidget) -> Callable[[], float]:
    """Each call types the next needle (one character more or less) and paints the table."""
    needles = iter(NEEDLES * 10_000)

    def keystroke() -> float:
        began = time.perf_counter()
        line.setText(next(needles))
        painted(table)
        return time.perf_counter() - began

    return keystroke


def shown_texts(page: Page) -> list[list[str]]:
    """What the page shows, row by row (its display texts)."""
    model = page.model
    return [[str(model.index(row, column).data() or "") for column in range(model.columnCount())]
            for row in range(model.rowCount())]  # fmt: skip


@contextmanager
def app_on_a_store(routines: int) -> Iterator[tuple[Desktop, SteppedLoop]]:
    """The app on a store with ``routines`` routines and a day of history, and its loop."""
    with scratch("routines-page-") as directory:
        data = directory / "data"
        make_store(data, daily_at_spread_times(routines), NOW - timedelta(days=1, minutes=1), NOW)
        with running_desktop(data, VirtualClock(NOW, autojump=False)) as (desktop, loop):
            desktop.locale = "en_US"
            yield desktop, loop


def measure(rounds: int, routines: int = ROUTINES) -> list[Figure]:
    with app_on_a_store(routines) as (desktop, loop):
        parts, host = Breakdown(), window()
        page = Page(desktop, host)
        shown(page)
        loop.run_until_complete(page.reload())
        texts = shown_texts(page)
        assert len(texts) == routines, len(texts)

        def ours() -> float:
            return float(loop.run_until_complete(page_first_paint(desktop, host, parts)))

        mine, theirs = interleaved(ours, lambda: bare_first_paint(texts, host), rounds=rounds)
        first = [statistics.median(mine), statistics.median(theirs)]
        bare = BareTable(texts, host)
        shown(bare)
        mine, theirs = interleaved(keystrokes(page.filter, page.table),
                                   keystrokes(bare.filter, bare.table), rounds=rounds)  # fmt: skip
        assert page.shown.rowCount() == bare.shown.rowCount() > 0
        typed = [statistics.median(mine), statistics.median(theirs)]
        for widget in (bare, page, host):
            freed(widget)
    return figures_of(first, typed, parts, routines)


def figures_of(
    first: list[float], typed: list[float], parts: Breakdown, routines: int
) -> list[Figure]:
    base_ms = first[1] * 1e3

    def part(name: str, samples: list[float]) -> Figure:
        ms = statistics.median(samples[1:]) * 1e3  # the first was the unmeasured warm-up
        return info_figure(f"  of which {name}", "ms", ms, base_ms, ms / base_ms,
                           baseline_name=BARE)  # fmt: skip

    # The rows keep the names; how many routines were measured is in the notes.
    return [
        cost_figure("Routines page first paint, 1,000 routines", "ms", first[0] * 1e3, base_ms,
                    TARGET, baseline_name=BARE, note=f"{routines:,} routines: built, reloaded "
                    "(read on the operator thread), painted 1000 × 680"),
        part("building the page", parts.build),
        part("its reload (read, set, columns fitted)", parts.reload),
        part("painting it", parts.paint),
        cost_figure("Routines page filter keystroke, 1,000 routines", "ms", typed[0] * 1e3,
                    typed[1] * 1e3, TARGET, baseline_name=BARE,
                    note=f"{routines:,} routines: sync ↔ syn, the table painted again"),
    ]  # fmt: skip


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``python -m benchmarks``)."""
    return measure(5 if quick else 15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--routines", type=int, default=ROUTINES)
    parser.add_argument("--json", type=Path, default=Path("build/bench/routines_page.json"))
    args = parser.parse_args()
    table = measure(args.rounds, args.routines)
    print_table(table, "bare")
    write_json(table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
