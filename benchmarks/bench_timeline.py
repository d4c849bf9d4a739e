"""Paint time of the timeline with 10,000 occurrences in view, against painting the same number
of plain rectangles in a bare QWidget, in the same run (issue #8; goal: at most 2× the bare
widget's time, i.e. ratio ≥ 0.5).

ours:     the Timeline canvas (``coven_desktop.windows.timeline_canvas``) holding 10 routines
          × 1,000 occurrences, all in view at month zoom, dispositions mixed at random (the
          worst case for merging: every colour is interrupted by the others), plus coalesced
          windows, planned moments, DST transitions, sleep and downtime bands, the axis with
          its labels, the routine names and the now line.
baseline: a bare QWidget whose paintEvent draws 10,000 precomputed rectangles (3 × 16 px, at
          the same places as our marks) with one ``drawRects`` call — the cheapest way Qt
          paints that many rectangles from Python.

Both paint into a 1200 × 400 QImage through ``QWidget.render``, offscreen, interleaved A B A B.
Three figures: a repaint of an unchanged view; a repaint after a one-pixel pan (what a drag
costs per frame: each row's marks are rendered once per zoom into a strip reaching a quarter
view beyond each edge, and a pan only moves the blit); a repaint after a zoom step (every
row's strip is rendered again — the costliest frame, also what a pan past the strip costs).

Run: QT_QPA_PLATFORM=offscreen python3 benchmarks/bench_timeline.py [--rounds N] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QApplication, QWidget

from benchmarks.harness import Figure, print_table, side_by_side, speed_figure, write_json
from coven_core.views.timeline import (
    Band,
    CoalescedWindow,
    Lane,
    PlannedMoment,
    RecordedOccurrence,
    Timeline,
    zone_transitions,
)
from coven_desktop.windows.timeline_canvas import (
    AXIS_HEIGHT,
    LANE_HEIGHT,
    MARK_HEIGHT,
    MARK_WIDTH,
    ZOOM_STEP,
    TimelineCanvas,
)

ROUTINES, PER_ROUTINE = 10, 1_000
SIZE = (1200, 400)
NOW = datetime(2026, 3, 20, 12, tzinfo=UTC)
START = NOW - timedelta(days=24)
SPAN = timedelta(days=31)  # the widest zoom: every occurrence is in view
TARGET = 0.5  # ratio = baseline / ours: ≤ 2× the bare widget's time
DISPOSITIONS = ("succeeded", "failed", "cancelled", "timed_out", "skipped",
                "recovery_required", "reconciled")  # fmt: skip


def lane(index: int, rng: random.Random) -> Lane:
    """1,000 occurrences in view and as many again on either side (the page loads one view's
    width beyond each edge, so that panning paints from memory)."""
    step = SPAN / PER_ROUTINE
    instants = [START + step * n for n in range(-PER_ROUTINE, 2 * PER_ROUTINE)]
    past = [t for t in instants if t <= NOW]
    recorded = tuple(occurrence(f"o{index}-{n}", t, rng) for n, t in enumerate(past))
    planned = tuple(
        PlannedMoment(t, t.replace(tzinfo=None), 0, "regular", False) for t in instants[len(past) :]
    )
    day = timedelta(days=1)
    window = CoalescedWindow(f"w{index}", START + 3 * day, START + 4 * day, 30, "missed", "asleep")
    zone = "America/New_York" if index % 2 else "Europe/Berlin"
    transitions = zone_transitions(zone, START - SPAN, START + 2 * SPAN)
    name = f"routine {index:02d}"
    return Lane(f"r{index}", name, zone, "active", recorded, (window,), planned, transitions, False)


def occurrence(oid: str, at: datetime, rng: random.Random) -> RecordedOccurrence:
    wall, disposition = at.replace(tzinfo=None), rng.choice(DISPOSITIONS)
    return RecordedOccurrence(
        oid, "scheduled", at, wall, 0, "regular", "settled", disposition, None
    )


def timeline() -> Timeline:
    rng = random.Random(8)
    day = timedelta(days=1)
    asleep = Band("asleep", START + 3 * day, START + 4 * day)
    away = Band("app_not_running", START + 10 * day, START + 11 * day)
    lanes = tuple(lane(i, rng) for i in range(ROUTINES))
    return Timeline(START - SPAN, START + 2 * SPAN, NOW, lanes, (asleep, away), "2026f")


class BareRectangles(QWidget):
    """The baseline: 10,000 precomputed rectangles, one drawRects call."""

    def __init__(self, rects: list[QRectF]) -> None:
        super().__init__()
        self.rects = rects
        self.colour = QColor("#2e7d32")

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setPen(QColor(0, 0, 0, 0))
        painter.setBrush(self.colour)
        painter.drawRects(self.rects)
        painter.end()


def same_rectangles(canvas: TimelineCanvas) -> list[QRectF]:
    """A rectangle where each of our marks is, unmerged."""
    view = canvas.view()
    rects = []
    for row, geometry in enumerate(canvas.lanes):
        top = AXIS_HEIGHT + row * LANE_HEIGHT + (LANE_HEIGHT - MARK_HEIGHT) / 2
        for instant in geometry.instants:
            if view.start <= instant < view.end:
                x = view.x(instant) - MARK_WIDTH / 2
                rects.append(QRectF(x, top, MARK_WIDTH, MARK_HEIGHT))
    return rects


def build() -> tuple[TimelineCanvas, BareRectangles]:
    canvas = TimelineCanvas("en_US", UTC)
    canvas.resize(*SIZE)
    canvas.set_timeline(timeline())
    canvas.set_view(START.timestamp(), SPAN.total_seconds())
    view = canvas.view()
    in_view = sum(view.start <= t < view.end for lane in canvas.lanes for t in lane.instants)
    assert in_view == ROUTINES * PER_ROUTINE, in_view
    bare = BareRectangles(same_rectangles(canvas))
    bare.resize(*SIZE)
    return canvas, bare


def painter_of(widget: QWidget) -> object:
    image = QImage(*SIZE, QImage.Format.Format_ARGB32_Premultiplied)
    return lambda: widget.render(image)


def panning(canvas: TimelineCanvas) -> object:
    """Each call pans one pixel (alternating left and right, so the view stays put)."""
    paint = painter_of(canvas)
    state = {"direction": 1.0}

    def pan_and_paint() -> None:
        state["direction"] = -state["direction"]
        canvas.start += state["direction"] / canvas.view().scale  # as a drag does
        paint()  # type: ignore[operator]

    return pan_and_paint


def zooming(canvas: TimelineCanvas) -> object:
    """Each call zooms a step in or out around the middle (alternating): every loaded mark is
    placed again at the new zoom — the costliest repaint."""
    paint = painter_of(canvas)
    middle = canvas.start + canvas.span / 2
    spans = [canvas.span, canvas.span / ZOOM_STEP]

    def zoom_and_paint() -> None:
        spans.reverse()
        canvas.start, canvas.span = middle - spans[0] / 2, spans[0]
        paint()  # type: ignore[operator]

    return zoom_and_paint


def run(rounds: int) -> list[Figure]:
    canvas, bare = build()
    baseline = painter_of(bare)
    figures = []
    mine, base = side_by_side(painter_of(canvas), baseline, rounds=rounds, repeat=10)  # type: ignore[arg-type]
    figures.append(speed_figure("repaint, 10,000 occurrences in view", mine, base, TARGET))
    mine, base = side_by_side(panning(canvas), baseline, rounds=rounds, repeat=10)  # type: ignore[arg-type]
    figures.append(speed_figure("repaint after a 1-px pan, 10,000 in view", mine, base, TARGET))
    mine, base = side_by_side(zooming(canvas), baseline, rounds=rounds, repeat=10)  # type: ignore[arg-type]
    figures.append(speed_figure("repaint after a zoom step, 10,000 in view", mine, base, TARGET))
    return figures


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``python -m benchmarks``)."""
    app = QApplication.instance() or QApplication([])
    result = run(5 if quick else 15)
    del app
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", type=Path, default=Path("build/bench/timeline.json"))
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    figures = run(args.rounds)
    print_table(figures, "bare")
    write_json(figures, args.json)
    del app
    return 0 if all(f.passed for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
