"""The benchmark suite: every benchmark, one table, one JSON file (issue #9).

Run: ``make bench``, ``python -m benchmarks`` or ``python benchmarks/suite.py``
     [--quick] [--only NAME ...] [--json PATH] (default ``build/bench/suite.json``)

Convention: each module ``benchmarks/bench_<name>.py`` exposes ::

    def figures(quick: bool) -> list[harness.Figure]

and keeps its own ``__main__`` for running it alone with more options. The suite finds the
modules by that file name, runs each in its own interpreter (so one benchmark's imports,
Qt state, threads or crash cannot touch the next) and prints every row of the issue's table in
the issue's order. A module the issue's table needs but that is not there gets a visible
``not present`` row; one that fails gets an ``ERROR`` row with its last error line. Each
benchmark interleaves ours and its baseline (A B A B …) itself and reports medians.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import (  # noqa: E402 - after the path, for `python benchmarks/suite.py`
    COST,
    ERROR,
    KEEP_SCRATCH,
    SPEED,
    Figure,
    compile_sources,
    empty_scratch,
    error_figure,
    missing_figure,
    print_notes,
    print_table,
    with_bytecode,
)

#: The issue's table, in its order: module → the rows it must produce (for a "not present"
#: row when the module is missing). Modules not listed here run after these.
EXPECTED: dict[str, tuple[str, ...]] = {
    "bench_bookkeeping": ("bookkeeping per occurrence",),
    "bench_dispatch": ("dispatch /bin/true end to end",),
    "bench_apscheduler": ("drain of 1,000 routines due at once", "start lag p99 at 20 due/s"),
    "bench_next_occurrence": ("next-occurrence computation, cold and warm",),
    "bench_idle": ("idle voluntary context switches", "idle tray app RSS", "launch to ready"),
    "bench_status": ("`coven status` wall time",),
    "bench_retention": ("store growth over a simulated year", "retention longest lock hold"),
    "bench_timeline": ("timeline paint with 10,000 occurrences",),
    "bench_recovery": (
        "recovery after a month off: start to first dispatch",
        "recovery after a month off: start to a settled queue",
    ),
    "bench_routines_page": (
        "Routines page first paint, 1,000 routines",
        "Routines page filter keystroke, 1,000 routines",
    ),
    "bench_week_rss": ("RSS after a simulated week, main window open",),
}
MODULE_TIMEOUT = 900.0  # seconds; a benchmark that hangs becomes an ERROR row


def discover() -> list[str]:
    """The expected modules first (present or not), then any other ``bench_*.py``."""
    present = sorted(p.stem for p in (ROOT / "benchmarks").glob("bench_*.py"))
    return [*EXPECTED, *(name for name in present if name not in EXPECTED)]


def run_module(name: str, quick: bool) -> list[Figure]:
    """Run one benchmark module in a fresh interpreter; its figures (or one row saying why
    there are none). Its own output passes through for the details."""
    if not (ROOT / "benchmarks" / f"{name}.py").exists():
        return [missing_figure(row, f"benchmarks/{name}.py not present")
                for row in EXPECTED.get(name, (name,))]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-") as directory:
        out = Path(directory) / "figures.json"
        command = [sys.executable, "-m", "benchmarks.suite", "--child", name, str(out)]
        command += ["--quick"] if quick else []
        env = with_bytecode()
        env[KEEP_SCRATCH] = "1"  # emptied once, at the end: see harness.scratch
        env.setdefault("QT_QPA_PLATFORM", "offscreen")  # Qt benchmarks need no display
        try:
            done = subprocess.run(command, cwd=ROOT, timeout=MODULE_TIMEOUT, check=False,
                                  stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
        except subprocess.TimeoutExpired:
            return [error_figure(name, f"timed out after {MODULE_TIMEOUT:.0f} s")]
        if done.returncode != 0 or not out.exists():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            sys.stderr.write(done.stderr[-4000:])
            return [error_figure(name, f"exit {done.returncode}: {last}")]
        return [Figure.from_json(row) for row in json.loads(out.read_text())]


def child(name: str, out: Path, quick: bool) -> int:
    """In the benchmark's own interpreter: import it, call ``figures(quick)``, write JSON."""
    import importlib

    module = importlib.import_module(f"benchmarks.{name}")
    produce = getattr(module, "figures", None)
    if not callable(produce):
        raise SystemExit(f"benchmarks/{name}.py has no figures(quick: bool) -> list[Figure]")
    rows = [normalised(figure).to_json() for figure in produce(quick)]
    out.write_text(json.dumps(rows, allow_nan=False), encoding="utf-8")
    return 0


def normalised(figure: Figure) -> Figure:
    """A Figure subclass that judged itself differently (an older ``CostFigure``: lower is
    better) is written with the kind that says so, so the suite judges it the same way."""
    if type(figure) is Figure or figure.kind != SPEED:
        return figure
    if figure.passed != Figure.passed.fget(figure):  # type: ignore[attr-defined]
        return Figure.from_json({**figure.to_json(), "kind": COST})
    return figure


def machine_line() -> str:
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    when = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    return (f"{platform.node()}: {os.cpu_count()} cores, load average {load}; "
            f"Python {platform.python_version()}; {when}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a fast pass: fewer rounds")
    parser.add_argument("--only", nargs="*", default=None, help="module names (bench_x)")
    parser.add_argument("--json", type=Path, default=ROOT / "build/bench/suite.json")
    parser.add_argument("--child", nargs=2, metavar=("MODULE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child[0], Path(args.child[1]), args.quick)
    names = args.only or discover()
    compile_sources()
    started, before = time.monotonic(), machine_line()
    table: list[Figure] = []
    for name in names:
        print(f"\n=== {name} ===", flush=True)
        table += run_module(name, args.quick)
    after = machine_line()
    empty_scratch()
    print(f"\n=== suite ({'quick' if args.quick else 'full'}), "
          f"{time.monotonic() - started:.0f} s ===\nbefore: {before}\nafter:  {after}")  # fmt: skip
    print_table(table)
    print_notes(table)
    write(table, args.json, {"before": before, "after": after, "quick": args.quick})
    print(f"JSON: {args.json}")
    # A missed target is a finding, shown in the table; a benchmark that broke is a failure.
    return 1 if any(f.kind == ERROR for f in table) else 0


def write(table: list[Figure], path: Path, machine: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"machine": machine, "figures": [f.to_json() for f in table]}
    path.write_text(json.dumps(document, indent=2, allow_nan=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
