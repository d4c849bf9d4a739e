"""Side-by-side benchmarking: ours and a baseline interleaved (A B A B …) in one run.

Interleaving spreads machine noise over both sides alike; medians ignore the outliers. A
result is a ratio against the baseline measured in the same run, never an absolute time.

Every benchmark module ``benchmarks/bench_*.py`` exposes ``figures(quick: bool) ->
list[Figure]`` for the suite (``python -m benchmarks``) and keeps its own ``__main__``.
A :class:`Figure` says by its ``kind`` how its target reads:

========  =====================================  ===============================
kind      ratio                                  passes when
========  =====================================  ===============================
speed     baseline time / our time (×, higher)   ratio ≥ target
cost      ours / baseline (×, lower is better)   ratio ≤ target
delta     ours − baseline (in ``unit``)          ratio ≤ target ("≤ +2")
bound     ours / the bound (``baseline``)        ours ≤ the bound
info      as ``speed`` or ``cost``, no target    never judged (a floor, a detail)
missing   —                                      never (the benchmark is not present)
error     —                                      never (the benchmark failed)
========  =====================================  ===============================
"""

from __future__ import annotations

import atexit
import compileall
import contextlib
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

SPEED, COST, DELTA, BOUND, INFO, MISSING, ERROR = (
    "speed", "cost", "delta", "bound", "info", "missing", "error",
)  # fmt: skip
_NAN = float("nan")


@dataclass(frozen=True)
class Figure:
    """One benchmark row: our median, the baseline's, their ratio and the target."""

    name: str
    unit: str
    ours: float
    baseline: float
    ratio: float  # for ``speed``: baseline time / our time ("× the baseline's speed")
    target: float
    kind: str = SPEED
    note: str = ""
    baseline_name: str = ""  # what the baseline is, for the suite's table
    extra: dict[str, float] = field(default_factory=dict)  # details kept in the JSON

    @property
    def passed(self) -> bool | None:
        """None for a row that is not judged (``info``)."""
        if self.kind == SPEED:
            return self.ratio >= self.target
        if self.kind in (COST, DELTA):
            return self.ratio <= self.target
        if self.kind == BOUND:
            return self.ours <= self.baseline
        if self.kind == INFO:
            return None
        return False

    @property
    def verdict(self) -> str:
        if self.kind == MISSING:
            return "not present"
        if self.kind == ERROR:
            return "ERROR"
        return {True: "pass", False: "MISS", None: "info"}[self.passed]

    @property
    def target_text(self) -> str:
        if self.kind == SPEED:
            return f"≥ {self.target:.2f}×"
        if self.kind == COST:
            return f"≤ {self.target:.2f}×"
        if self.kind == DELTA:
            whole = float(self.target).is_integer()
            return f"≤ {self.target:+.0f}" if whole else f"≤ {self.target:+.2f}"
        if self.kind == BOUND:
            return "≤ bound"
        return "—"

    @property
    def ratio_text(self) -> str:
        if self.kind in (MISSING, ERROR):
            return "—"
        if self.kind == DELTA:
            return f"{self.ratio:+.0f}"
        return f"{self.ratio:.2f}×"

    def to_json(self) -> dict[str, object]:
        """Strict JSON: what was not measured (NaN) is null."""
        row = {k: None if v != v else v for k, v in asdict(self).items()}
        return {**row, "passed": self.passed, "target_text": self.target_text}

    @classmethod
    def from_json(cls, row: dict[str, object]) -> Figure:
        names = {f.name for f in fields(cls)}
        values = {k: _NAN if v is None else v for k, v in row.items() if k in names}
        return cls(**values)  # type: ignore[arg-type]


# -- measuring ------------------------------------------------------------------------------
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
    mine, theirs = interleaved(
        lambda: timed(ours, repeat), lambda: timed(baseline, repeat), rounds=rounds
    )
    return statistics.median(mine), statistics.median(theirs)


def interleaved(
    ours: Callable[[], float], baseline: Callable[[], float], *, rounds: int, warm: bool = True
) -> tuple[list[float], list[float]]:
    """Each side's samples, measured A B A B …; one unmeasured call each first (imports,
    caches) unless ``warm`` is False."""
    if warm:
        ours(), baseline()
    mine, theirs = [], []
    for _ in range(rounds):
        mine.append(ours())
        theirs.append(baseline())
    return mine, theirs


def percentile(values: Iterable[float], share: float) -> float:
    """The nearest-rank percentile (``share`` in 0..1) of ``values``."""
    ordered = sorted(values)
    if not ordered:
        return _NAN
    return ordered[min(len(ordered) - 1, max(0, int(share * len(ordered) + 0.5) - 1))]


# -- processes ------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]


def with_bytecode(env: dict[str, str] | None = None) -> dict[str, str]:
    """An environment for measured child processes that may use and write ``__pycache__``.

    An installed wheel has its bytecode compiled by pip; a checkout run with
    PYTHONDONTWRITEBYTECODE (set on these machines) would recompile every module of ours on
    every start while the baseline's libraries load from bytecode — a cost no user pays."""
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_sources() -> None:
    """Bytecode for the engine, the app and the benchmarks, as an installation would have."""
    for package in ("core", "coven_desktop", "benchmarks"):
        compileall.compile_dir(ROOT / package, quiet=1)


# -- figures --------------------------------------------------------------------------------
def speed_figure(name: str, ours: float, baseline: float, target: float, **more: object) -> Figure:
    """Seconds per call, both sides; shown in µs."""
    return Figure(name, "µs", ours * 1e6, baseline * 1e6, baseline / ours, target, **more)  # type: ignore[arg-type]


def cost_figure(
    name: str, unit: str, ours: float, baseline: float, target: float, **more: object
) -> Figure:
    """Lower is better: ours / baseline ≤ target."""
    return Figure(name, unit, ours, baseline, ours / baseline, target, COST, **more)  # type: ignore[arg-type]


def delta_figure(
    name: str, unit: str, ours: float, baseline: float, allowance: float, **more: object
) -> Figure:
    """At most ``allowance`` more than the baseline."""
    return Figure(name, unit, ours, baseline, ours - baseline, allowance, DELTA, **more)  # type: ignore[arg-type]


def bound_figure(name: str, unit: str, ours: float, bound: float, **more: object) -> Figure:
    """Within a fixed bound (the ``baseline`` column holds the bound)."""
    more.setdefault("baseline_name", "the bound")
    return Figure(name, unit, ours, bound, ours / bound if bound else _NAN, 1.0, BOUND, **more)  # type: ignore[arg-type]


def info_figure(
    name: str, unit: str, ours: float, baseline: float, ratio: float, **more: object
) -> Figure:
    """A measured detail with no target of its own (a floor, a breakdown)."""
    return Figure(name, unit, ours, baseline, ratio, _NAN, INFO, **more)  # type: ignore[arg-type]


def missing_figure(name: str, why: str) -> Figure:
    return Figure(name, "", _NAN, _NAN, _NAN, _NAN, MISSING, note=why)


def error_figure(name: str, why: str) -> Figure:
    return Figure(name, "", _NAN, _NAN, _NAN, _NAN, ERROR, note=why)


# -- output ---------------------------------------------------------------------------------
def _value(number: float, unit: str) -> str:
    if number != number:  # NaN: not measured
        return "—"
    digits = 0 if abs(number) >= 1000 or float(number).is_integer() else 2
    return f"{number:,.{digits}f}{unit}"


def print_table(figures: list[Figure], baseline_name: str = "baseline") -> None:
    """The table: figure, ours, baseline, ratio, target, result (and what the baseline is
    when rows carry their own baseline name)."""
    named = any(f.baseline_name for f in figures)
    print(f"{'figure':52} {'ours':>11} {baseline_name:>11} {'ratio':>7} {'target':>8}  result"
          + ("       baseline" if named else ""))  # fmt: skip
    for f in figures:
        row = (f"{f.name:52} {_value(f.ours, f.unit):>11} {_value(f.baseline, f.unit):>11} "
               f"{f.ratio_text:>7} {f.target_text:>8}  {f.verdict:<11}")  # fmt: skip
        if named:
            row += f"  {f.baseline_name}"
        print(row.rstrip())


def print_notes(figures: list[Figure]) -> None:
    for f in figures:
        if f.note:
            print(f"  {f.name}: {f.note}")


def write_json(figures: list[Figure], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [f.to_json() for f in figures]
    path.write_text(json.dumps(rows, indent=2, allow_nan=False) + "\n", encoding="utf-8")


# -- scratch directories --------------------------------------------------------------------
SCRATCH = ROOT / "build" / "scratch"
KEEP_SCRATCH = "COVEN_BENCH_KEEP_SCRATCH"
"""Set by the suite for its children: it empties :data:`SCRATCH` itself, once, at the end."""
_scratch_emptied_at_exit = False  # whether this process has registered that yet


@contextlib.contextmanager
def scratch(prefix: str = "run-") -> Iterator[Path]:
    """A fresh directory for one measured run, removed only when the benchmarking is over.

    Not at the end of the run: on an ext4 without a journal (this machine's root), allocating
    an inode skips, one by one, every inode deleted in the last minute or so (the kernel's
    ``recently_deleted``), each check reading an inode-table block. One round's cleanup of a
    few thousand files then taxes every file the next round creates — ours creates about seven
    per attempt, APScheduler none — so the order of the rounds, not the code, decides the
    result. Measured with ``perf record``: that scan was 20–48 % of the engine's CPU in the
    drain and lag runs right after a cleanup; the lag run's p99 went from 221 ms to
    295–336 ms after 20,000 deleted files. A desktop's journaled ext4 never does the scan."""
    global _scratch_emptied_at_exit
    if not _scratch_emptied_at_exit and not os.environ.get(KEEP_SCRATCH):
        atexit.register(empty_scratch)  # a benchmark run alone, on its first scratch
        _scratch_emptied_at_exit = True
    SCRATCH.mkdir(parents=True, exist_ok=True)
    yield Path(tempfile.mkdtemp(prefix=prefix, dir=SCRATCH))


def empty_scratch() -> None:
    shutil.rmtree(SCRATCH, ignore_errors=True)
