"""The timeline's geometry, prepared when data arrives so that painting stays cheap (issue #8).

Each row's marks are rendered into a :class:`Strip` — a small image of the view and a margin
on either side (:data:`STRIP_MARGIN`) at the current zoom — and a paint is one blit per row:
panning inside the strip only moves the blit; a zoom, or a pan past the strip, renders it.

Level of detail: a strip has one colour per pixel column. Rendering writes, for each colour in
painting order, the colour's index into a one-byte-per-column mask at the marks' columns (the
later colour wins a shared column: :data:`CATEGORIES` paints what needs a person's eye last),
then turns the mask into pixels with ``bytes.translate`` per channel. Mapping an instant to
its column is one short loop step (:func:`_cover`); widening and merging the marks are
operations on whole rows, and no Qt object is made for a mark: the cost is a few bytecodes
per mark at a zoom, and nothing per mark while panning.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from dataclasses import dataclass, field

from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage

from coven_core.queries import CoalescedWindow, Lane, PlannedMoment, RecordedOccurrence, Transition

PLANNED, PLANNED_SKIPPED, IN_PROGRESS = "planned", "planned_skipped", "in_progress"
DISPOSITIONS = (
    "succeeded", "failed", "cancelled", "timed_out", "skipped", "recovery_required", "reconciled",
    "shadowed",
)  # fmt: skip
#: The colour categories in painting order: where marks of several share a pixel column at a
#: wide zoom, the later one shows, so what needs a person's eye is painted last.
CATEGORIES = (
    PLANNED, PLANNED_SKIPPED, "shadowed", "succeeded", "skipped", "reconciled", "cancelled",
    IN_PROGRESS, "timed_out", "failed", "recovery_required",
)  # fmt: skip
MARK_WIDTH, MARK_HEIGHT = 3.0, 16.0  # pixels: one occurrence's mark
#: How far a strip reaches beyond each side of the view, in views: panning that far is a blit;
#: further, or a zoom, renders the strip again (its cost grows with this margin).
STRIP_MARGIN = 0.25


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
    transitions: list[tuple[float, Transition]] = field(default_factory=list)
    instants: array[float] = field(default_factory=lambda: array("d"))  # every mark, sorted
    items: list[Mark] = field(default_factory=list)
    #: When the commands ran, per colour: a bar from the first start to the last end, or to
    #: ``now`` while one still runs (a running run grows; a tick alone hid behind now).
    runs: dict[str, list[tuple[float, float, RecordedOccurrence]]] = field(default_factory=dict)
    _strip: Strip | None = None

    @classmethod
    def of(cls, lane: Lane, now: float | None = None) -> LaneGeometry:
        built = cls(lane)
        marks: list[Mark] = [*lane.recorded, *lane.planned]
        everything = sorted(marks, key=lambda item: item.utc)
        per_colour: dict[str, list[float]] = {}
        for item in everything:
            instant = item.utc.timestamp()
            per_colour.setdefault(category_of(item), []).append(instant)
            built.instants.append(instant)
            ran = _ran(item, now)
            if ran is not None:
                built.runs.setdefault(category_of(item), []).append((*ran, item))  # type: ignore[arg-type]
        built.items = everything
        built.marks = {key: array("d", per_colour[key]) for key in CATEGORIES if key in per_colour}
        built.windows = [(w.first.timestamp(), w.last.timestamp(), w) for w in lane.windows]
        built.transitions = [(t.utc.timestamp(), t) for t in lane.transitions]
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
        return self.items[best[1]] if best is not None else self._running_at(instant)

    def grow(self, now: float) -> bool:
        """Runs still going reach ``now``; whether any did (then the strip is drawn again)."""
        grown = False
        for bars in self.runs.values():
            for index, (began, _ended, item) in enumerate(bars):
                if item.ran_until is None:
                    bars[index] = (began, max(now, began), item)
                    grown = True
        if grown:
            self._strip = None
        return grown

    def _running_at(self, instant: float) -> RecordedOccurrence | None:
        """The run whose bar covers ``instant`` (its mark is out of reach)."""
        for bars in self.runs.values():
            for began, ended, item in bars:
                if began <= instant <= ended:
                    return item
        return None

    def forget_strip(self) -> None:
        """The strip was drawn in other colours (the palette changed): draw it again."""
        self._strip = None

    def strip_for(self, view: View, palette: Palette) -> Strip:
        """The row's strip for this view: reused while the view pans inside it at one zoom."""
        strip = self._strip
        if strip is None or not strip.covers(view):
            strip = self._strip = self._render(view, palette)
        return strip

    def _render(self, view: View, palette: Palette) -> Strip:
        start, scale = view.start - STRIP_MARGIN * view.span, view.scale
        width = int((1 + 2 * STRIP_MARGIN) * view.width) + 1
        mask = 0  # the row as one big integer, a byte per column: 0 none, n CATEGORIES[n - 1]
        for index, key in enumerate(CATEGORIES, 1):
            instants = self.marks.get(key)
            if instants:  # marks whose whole width fits in the strip
                low = bisect_left(instants, start + MARK_WIDTH / scale)
                high = bisect_left(instants, start + (width - MARK_WIDTH) / scale)
                cover = _cover(instants[low:high], start, scale, width)
                bars = self.runs.get(key)
                if bars:
                    cover = _with_bars(cover, bars, start, scale, width)
                mask = (mask & ~_bytes_int(cover.translate(_ALL_SET))) | _bytes_int(
                    cover.translate(_VALUE[index]))  # fmt: skip
        return Strip(start, scale, width, palette.pixels(mask.to_bytes(width, "little")))

    def transition_at(self, instant: float, tolerance: float) -> Transition | None:
        for at, change in self.transitions:
            if abs(at - instant) <= tolerance:
                return change
        return None

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


_HALF = int(MARK_WIDTH) // 2
_ALL_SET = bytes([0]) + bytes([255]) * 255  # translate: 1 → 0xFF (a byte mask)
_VALUE = [bytes([0, value]) + bytes(254) for value in range(256)]  # translate: 1 → value


def _bytes_int(data: bytes | bytearray) -> int:
    return int.from_bytes(data, "little")


def _cover(instants: array[float], start: float, scale: float, width: int) -> bytes:
    """A byte per column, 1 under any of these marks; widening each to ``MARK_WIDTH`` pixels is
    a few shifts of the row as one big integer.

    The columns are written by a plain loop: Python 3.11 specialises its float arithmetic and
    the store, and it took 0.6× the time of the chain of ``map`` over ``float.__mul__``,
    ``float.__add__`` and ``bytearray.__setitem__`` it replaced (each call of a slot wrapper
    packs its arguments into a tuple). That is most of a zoom step's cost (issue #9)."""
    hit = bytearray(width)
    for instant in instants:
        hit[int((instant - start) * scale)] = 1
    bits = spread = _bytes_int(hit)
    for shift in range(1, _HALF + 1):
        spread |= (bits << 8 * shift) | (bits >> 8 * shift)
    return (spread & ((1 << 8 * width) - 1)).to_bytes(width, "little")


def _ran(item: Mark, now: float | None) -> tuple[float, float] | None:
    if not isinstance(item, RecordedOccurrence) or item.ran_from is None:
        return None
    began = item.ran_from.timestamp()
    if item.ran_until is not None:
        return began, item.ran_until.timestamp()
    return None if now is None else (began, max(now, began))


def _with_bars(
    cover: bytes,
    bars: list[tuple[float, float, RecordedOccurrence]],
    start: float,
    scale: float,
    width: int,
) -> bytes:
    """``cover`` with every bar's columns set: a run as long as it ran."""
    hit = bytearray(cover)
    for began, ended, _item in bars:
        first = max(int((began - start) * scale), 0)
        last = min(int((ended - start) * scale), width - 1)
        if last >= first:
            hit[first : last + 1] = b"\x01" * (last - first + 1)
    return bytes(hit)


class Palette:
    """Mask values to pixels: one ``bytes.translate`` table per channel of ARGB32 (stored
    blue, green, red, alpha on little-endian machines; value 0 stays transparent)."""

    def __init__(self, colours: list[tuple[int, int, int]]) -> None:
        channels = [bytearray(256) for _ in range(4)]
        for value, (red, green, blue) in enumerate(colours, 1):
            for channel, level in zip(channels, (blue, green, red, 255), strict=True):
                channel[value] = level
        self.tables = [bytes(channel) for channel in channels]

    def pixels(self, mask: bytes) -> bytearray:
        row = bytearray(4 * len(mask))
        for channel, table in enumerate(self.tables):
            row[channel::4] = mask.translate(table)
        return row


@dataclass
class Strip:
    """One row's marks rendered for a stretch of time at one zoom: ``width`` pixels from
    ``start``: the view and :data:`STRIP_MARGIN` of a view on either side."""

    start: float
    scale: float
    width: int
    row: bytearray
    image: QImage = field(init=False)

    def __post_init__(self) -> None:
        self._pixels = bytes(self.row) * int(MARK_HEIGHT)  # the image reads these; keep them
        self.image = QImage(self._pixels, self.width, int(MARK_HEIGHT), 4 * self.width,
                            QImage.Format.Format_ARGB32_Premultiplied)  # fmt: skip

    def covers(self, view: View) -> bool:
        left = (view.start - self.start) * self.scale
        return view.scale == self.scale and left >= 0 and left + view.width <= self.width

    def source(self, view: View) -> QRectF:
        """The part of the strip the view shows."""
        return QRectF((view.start - self.start) * self.scale, 0, view.width, MARK_HEIGHT)


def span_rect(first: float, last: float, view: View, top: float, height: float) -> QRectF | None:
    """A band from ``first`` to ``last`` clipped to the view (None when out of it)."""
    if last < view.start or first > view.end:
        return None
    x0 = max(view.x(first), view.left)
    x1 = min(view.x(last), view.left + view.width)
    return QRectF(x0, top, max(x1 - x0, 2.0), height)
