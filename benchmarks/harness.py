"""Side-by-side benchmarking: ours and a baseline interleaved (A B A B …) in one run.

Interleaving spreads machine noise over both sides alike; medians ignore the outliers. A
result is a ratio against the baseline measured in the same run, never an absolute time.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Figure:
    """One benchmark row: our median, the baseline's, their ratio and the target."""

    name: str
    unit: str
    ours: float
    baseline: float
    ratio: float  # higher is better: baseline time / our time ("× the baseline's speed")
    target: float

    @property
    def passed(self) -> bool:
        return self.ratio >= self.target


def timed(action: Callable[[], object], repeat: int) -> float:
    """Seconds per call of ``action`` (mean of ``repeat`` calls)."""
    start = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - start) / repeat


def side_by_side(
    ours: Callable[[], object], baseline: Callable[[], object], *, rounds: int, repeat: int
) -> tuple[float, float]:
    """Median seconds per call for each side, measured A B A B … for ``rounds`` rounds."""
    ours(), baseline()  # warm both up (imports, caches) before measuring
    mine, theirs = [], []
    for _ in range(rounds):
        mine.append(timed(ours, repeat))
        theirs.append(timed(baseline, repeat))
    return statistics.median(mine), statistics.median(theirs)


def speed_figure(name: str, ours: float, baseline: float, target: float) -> Figure:
    return Figure(name, "µs", ours * 1e6, baseline * 1e6, baseline / ours, target)


def print_table(figures: list[Figure], baseline_name: str) -> None:
    print(f"{'figure':44} {'ours':>10} {baseline_name:>10} {'ratio':>7} {'target':>7}  result")
    for f in figures:
        verdict = "pass" if f.passed else "MISS"
        print(
            f"{f.name:44} {f.ours:>8.2f}{f.unit} {f.baseline:>8.2f}{f.unit} "
            f"{f.ratio:>6.2f}× {f.target:>6.2f}×  {verdict}"
        )


def write_json(figures: list[Figure], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{**asdict(f), "passed": f.passed} for f in figures]
    path.write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
