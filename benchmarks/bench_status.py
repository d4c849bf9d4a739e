"""``coven status`` wall time against the imports it cannot avoid, in one run (issue #9).

ours:     ``coven status`` (the installed console script, else ``python -m
          coven_core.cli.main``) on a store holding 1,000 routines in the default data
          directory (platformdirs' user data dir, under a temp ``XDG_DATA_HOME``): process
          start to exit — the interpreter, the imports, finding, opening and checking the
          store, the status queries, the Babel-formatted output.
baseline: ``python -c "import apsw, zoneinfo, babel.dates"``, the libraries any such command
          loads. Both are fresh processes, interleaved A B A B, medians; goal ≤ 2×.
floor:    the baseline plus one size formatted in the user's locale (``babel.units``, as
          status prints the store's size): any localized output loads the locale's CLDR data,
          which the baseline's bare import does not.

Run: python3 benchmarks/bench_status.py [--rounds N] [--routines N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import (  # noqa: E402
    Figure,
    compile_sources,
    cost_figure,
    info_figure,
    interleaved,
    print_table,
    scratch,
    with_bytecode,
)
from coven_core.engine import open_engine  # noqa: E402
from coven_core.model import RevisionSpec  # noqa: E402

TARGET = 2.0
BASELINE = [sys.executable, "-c", "import apsw, zoneinfo, babel.dates"]
FLOOR = [
    sys.executable,
    "-c",
    "import apsw, zoneinfo, babel.dates, babel.units; "
    "babel.units.format_unit(1.2, 'digital-megabyte', length='short', locale='en_US')",
]


def coven_command() -> list[str]:
    script = Path(sys.executable).with_name("coven")
    if script.exists() or shutil.which("coven") == str(script):
        return [str(script)]
    return [sys.executable, "-m", "coven_core.cli.main"]


def fill(env: dict[str, str], routines: int) -> None:
    """The routines, in the default data directory of ``env`` (what ``coven`` will find)."""
    from coven_core.store.location import resolve_data_dir

    saved = os.environ.get("XDG_DATA_HOME")
    os.environ["XDG_DATA_HOME"] = env["XDG_DATA_HOME"]
    try:
        data_dir = resolve_data_dir(None)
    finally:
        if saved is None:
            del os.environ["XDG_DATA_HOME"]
        else:
            os.environ["XDG_DATA_HOME"] = saved
    engine = open_engine(data_dir)
    try:
        spec = RevisionSpec("0 9 * * *", "UTC", ("/bin/true",))
        for index in range(routines):
            engine.operator.add_routine(f"status-{index:04d}", spec)
    finally:
        engine.close()


def wall_seconds(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure(rounds: int, routines: int) -> list[Figure]:
    with scratch("status-") as directory:
        env = with_bytecode({k: v for k, v in os.environ.items() if k != "COVEN_DATA_DIR"})
        env["XDG_DATA_HOME"] = str(Path(directory) / "share")
        fill(env, routines)
        compile_sources()
        ours = [*coven_command(), "status"]
        floors: list[float] = []

        def baseline_and_floor() -> float:
            floors.append(wall_seconds(FLOOR, env))
            return wall_seconds(BASELINE, env)

        mine, theirs = interleaved(lambda: wall_seconds(ours, env), baseline_and_floor,
                                   rounds=rounds)  # fmt: skip
    least = statistics.median(floors[1:])
    return [
        cost_figure("`coven status` wall time", "ms", statistics.median(mine) * 1e3,
                    statistics.median(theirs) * 1e3, TARGET,
                    baseline_name="python -c 'import apsw, zoneinfo, babel.dates'",
                    note=f"{routines:,} routines in the store; fresh processes, {rounds} rounds"),
        info_figure("  floor: those imports + one size in the user's locale", "ms", least * 1e3,
                    statistics.median(theirs) * 1e3, least / statistics.median(theirs),
                    baseline_name="the imports (Babel's locale data is the difference)"),
    ]  # fmt: skip


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``benchmarks/suite.py``)."""
    return measure(10 if quick else 25, 1000)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--routines", type=int, default=1000)
    args = parser.parse_args()
    print_table(measure(args.rounds, args.routines), "imports")
    return 0


if __name__ == "__main__":
    sys.exit(main())
