"""The timeline's geometry, computed once per load so that painting stays cheap (issue #8).

A :class:`LaneGeometry` keeps, per colour, the sorted instants of one routine's marks as an
``array('d')`` of POSIX seconds. Painting a view never walks the items one by one: for each
colour, :func:`runs` jumps with ``bisect`` from one pixel column to the next, so the work is
bounded by the pixels in view, not by the occurrences — 10,000 runs a minute apart at month
zoom become a few hundred rectangles, one per colour per stretch of touching columns
(level of detail). Everything here is plain Python; only the rectangle type comes from Qt.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from PySide6.QtCore import QRectF

from coven_core.timeline import CoalescedWindow, Lane, PlannedMoment, RecordedOccurrence

#: The colour categories, in painting order (later ones are drawn on top).
PLANNED, PLANNED_SKIPPED, IN_PROGRESS = "planned", "planned_skipped", "in_progress"
DISPOSITIONS = (
    "succeeded", "failed", "cancelled", "timed_out", "skipped", "recovery_required", "reconciled",
)  # fmt: skip
CATEGORIES = (PLANNED, PLANNED_SKIPPED, IN_PROGRESS, *DISPOSITIONS)


Mark = RecordedOccurrence | PlannedMoment


def category_of(item: Mark) -> str:
    if isinstance(item, PlannedMoment):
        return PLANNED_SKIPPED if item.skipped else PLANNED
    return item.disposition or IN_PROGRESS


@dataclass
class LaneGeometry:
    """One routine's row, ready to paint: instants per colour, and every item for hit tests."""

    lane: Lane
    marks: dict[str, array[float]] = field(default_factory=dict)
    windows: list[tuple[float, float, CoalescedWindow]] = field(default_factory=list)
    transitions: list[tuple[float, bool]] = field(default_factory=list)  # (instant, is_gap)
    instants: array[float] = field(default_factory=lambda: array("d"))  # every mark, sorted
    items: list[Mark] = field(default_factory=list)

    @classmethod
    def of(cls, lane: Lane) -> LaneGeometry:
        built = cls(lane)
        marks: list[Mark] = [*lane.recorded, *lane.planned]
        everything = sorted(marks, key=lambda item: item.utc)
        per_colour: dict[str, list[float]] = {}
        for item in everything:
            instant = item.utc.timestamp()
            per_colour.setdefault(category_of(item), []).append(instant)
            built.instants.append(instant)
        built.items = everything
        built.marks = {key: array("d", per_colour[key]) for key in CATEGORIES if key in per_colour}
        built.windows = [(w.first.timestamp(), w.last.timestamp(), w) for w in lane.windows]
        built.transitions = [(t.utc.timestamp(), t.is_gap) for t in lane.transitions]
        return built

    def nearest(
        self, instant: float, tolerance: float
    ) -> RecordedOccurrence | PlannedMoment | None:
        """The mark closest to ``instant`` within ``tolerance`` seconds."""
        index = bisect_left(self.instants, instant)
        best: tuple[float, int] | None = None
        for candidate in (index - 1, index):
            if 0 <= candidate < len(self.instants):
                distance = abs(self.instants[candidate] - instant)
                if distance <= tolerance and (best is None or distance < best[0]):
                    best = (distance, candidate)
        return None if best is None else self.items[best[1]]

    def window_at(self, instant: float, tolerance: float) -> CoalescedWindow | None:
        for first, last, window in self.windows:
            if first - tolerance <= instant <= last + tolerance:
                return window
        return None


@dataclass(frozen=True)
class View:
    """The visible time range mapped onto pixels: ``x = left + (t - start) * scale``."""

    start: float
    span: float
    left: float
    width: float

    @property
    def scale(self) -> float:
        return self.width / self.span

    @property
    def end(self) -> float:
        return self.start + self.span

    def x(self, instant: float) -> float:
        return self.left + (instant - self.start) * self.scale

    def instant(self, x: float) -> float:
        return self.start + (x - self.left) / self.scale


def runs(
    instants: array[float], view: View, top: float, height: float, mark: float
) -> list[QRectF]:
    """One rectangle per stretch of marks that touch at this zoom (each mark is ``mark``
    pixels wide): the level of detail that keeps painting bounded by pixels, not items."""
    scale, start, left = view.scale, view.start, view.left
    reach = mark / scale  # a mark's width in seconds
    low = bisect_left(instants, start - reach)
    high = bisect_right(instants, view.end + reach)
    found: list[QRectF] = []
    index = low
    while index < high:
        first = end = (instants[index] - start) * scale
        while index < high:  # swallow every mark that overlaps the run, jumping by bisection
            index = bisect_left(instants, start + (end + mark) / scale, index + 1, high)
            last = (instants[index - 1] - start) * scale
            if last <= end:
                break
            end = last
        found.append(QRectF(left + first - mark / 2, top, end - first + mark, height))
    return found


def span_rect(first: float, last: float, view: View, top: float, height: float) -> QRectF | None:
    """A band from ``first`` to ``last`` clipped to the view (None when out of it)."""
    if last < view.start or first > view.end:
        return None
    x0 = max(view.x(first), view.left)
    x1 = min(view.x(last), view.left + view.width)
    return QRectF(x0, top, max(x1 - x0, 2.0), height)
