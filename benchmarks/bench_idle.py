"""Idle cost of the running tray app against a bare PySide6 tray app, in one run (issue #7).

context switches: voluntary context switches of each process tree, summed over every thread,
          over a window (default 60 s) while the app holds 1,000 routines whose next deadline
          is hours away; goal: no more than the bare app's plus one per 30 s (≤ +2 in 60 s).
RSS:      resident memory once all have settled (the app's, plus the unique memory of any
          helper process — the runner fork server appears once a command has run); ≤ 1.5×.
launch:   process start → "ready" (start done, event loop idle); median of N launches each,
          interleaved A B C D after one unmeasured launch each; goal ≤ 2.0×.
floors:   the bare app with qasync and the engine imported (``idle_floor``, which loads them
          before Qt as the app does): what the contract's design (the engine in the app's
          process, on a qasync loop) costs before the app does anything — the best ratio any
          app of this design reaches.

The app is ``benchmarks/idle_app.py`` (the real Desktop, real clock, qasync), the baseline
``benchmarks/idle_bare.py`` (a QSystemTrayIcon shown, nothing else). All run under
QT_QPA_PLATFORM=offscreen, which has no system tray. The app is told there is one
(``--as-if-tray``), so it shows its tray icon and no window, as on a desktop and as the bare
app does; the app without that (its fallback: the main window with the routines page for
1,000 routines) is measured too and shown as info. Ratios: ours / baseline, lower is better.

Linux note: psutil's ``num_ctx_switches()`` reads /proc/PID/status, which counts the main
thread only; the figure here sums /proc/PID/task/*/status over every thread instead.

Run: python3 benchmarks/bench_idle.py [--seconds N] [--routines N] [--launches N]
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    Figure,
    compile_sources,
    cost_figure,
    delta_figure,
    info_figure,
    print_table,
    scratch,
    with_bytecode,
    write_json,
)
from coven_core.engine import open_engine
from coven_core.model import RevisionSpec

ROOT = Path(__file__).resolve().parents[1]
APP, BARE = "benchmarks.idle_app", "benchmarks.idle_bare"
FLOOR = "benchmarks.idle_floor"  # the bare app with qasync and the engine imported
TRAY = "--as-if-tray"  # the app's desktop path (tray icon, no window): see idle_app
READY_TIMEOUT = 120.0
QUIT_TIMEOUT = 30.0
WAKE_ALLOWANCE_SECONDS = 30.0  # the goal allows one extra wakeup per this many seconds
#: Issue #24's targets. Issue #9 set 1.3× and 1.5× before a floor was measured; its floor
#: (the bare app with qasync and the engine imported) came to 1.5× and 2.2–2.4×, and #24
#: set these at it.
RSS_TARGET, LAUNCH_TARGET = 1.5, 2.0
OFFSCREEN_NOTE = (
    "offscreen has no tray: the app is told one exists (--as-if-tray), so it "
    "shows its tray icon as on a desktop; the window fallback is shown below it"
)


@dataclass
class Launched:
    """A launcher process that has said "ready", and what it said before."""

    process: subprocess.Popen[bytes]
    seconds_to_ready: float
    threads: dict[int, str] = field(default_factory=dict)  # native id → Python thread name

    @property
    def tree(self) -> list[psutil.Process]:
        root = psutil.Process(self.process.pid)
        return [root, *root.children(recursive=True)]


# -- the data -------------------------------------------------------------------------------
def create_routines(data_dir: Path, count: int) -> str:
    """``count`` daily routines, all due about six hours from now; their schedule."""
    at = datetime.now(UTC) + timedelta(hours=6)
    spec = RevisionSpec(f"{at.minute} {at.hour} * * *", "UTC", ("/bin/true",))
    engine = open_engine(data_dir)
    try:
        for index in range(count):
            engine.operator.add_routine(f"idle-{index:04d}", spec)
    finally:
        engine.close()
    return spec.schedule


def child_environment(home: Path) -> dict[str, str]:
    """Offscreen, and every standard directory inside the benchmark's temp dir."""
    env = with_bytecode({k: v for k, v in os.environ.items() if k != "COVEN_DATA_DIR"})
    env["QT_QPA_PLATFORM"] = "offscreen"
    for name, sub in (("HOME", ""), ("XDG_CONFIG_HOME", ".config"),
                      ("XDG_CACHE_HOME", ".cache"), ("XDG_DATA_HOME", ".local/share"),
                      ("XDG_STATE_HOME", ".local/state")):  # fmt: skip
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / sub)
    return env


# -- processes ------------------------------------------------------------------------------
def launch(module: str, arguments: list[str], env: dict[str, str], log: Path) -> Launched:
    started = time.perf_counter()
    with log.open("ab") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", module, *arguments], cwd=ROOT, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
            bufsize=0,  # unbuffered: a line read never takes the next one from under select
        )  # fmt: skip
    threads = _read_until_ready(process, log)
    return Launched(process, time.perf_counter() - started, threads)


def _read_until_ready(process: subprocess.Popen[bytes], log: Path) -> dict[int, str]:
    assert process.stdout is not None
    threads: dict[int, str] = {}
    deadline = time.monotonic() + READY_TIMEOUT
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while selector.select(max(0.0, deadline - time.monotonic())):
            line = process.stdout.readline().decode().strip()
            if line == "ready":
                return threads
            if line.startswith("threads "):
                threads = {int(k): v for k, v in json.loads(line[8:]).items()}
            elif not line and process.poll() is not None:
                break
    process.kill()
    code = process.wait()
    tail = log.read_text(errors="replace")[-2000:]
    raise RuntimeError(f"{process.args!r} never said ready (exit {code}):\n{tail}")


def stop(launched: Launched) -> int:
    """Ask the process to quit (a line on stdin), wait; kill only if it will not."""
    process = launched.process
    assert process.stdin is not None
    try:
        process.stdin.write(b"quit\n")
        process.stdin.close()
    except BrokenPipeError:
        pass
    try:
        return process.wait(QUIT_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return -9


# -- measurements ---------------------------------------------------------------------------
def launch_seconds(
    env: dict[str, str], data_dir: Path, log: Path, rounds: int
) -> tuple[float, float, float, float]:
    """Median seconds from start to ready: app, bare, the floor and the app without a tray
    (its window), interleaved A B C D A B C D."""
    sides = ((APP, [str(data_dir), TRAY]), (BARE, []), (FLOOR, []), (APP, [str(data_dir)]))
    for module, arguments in sides:  # warm up (caches, the first pass's planning)
        stop(launch(module, arguments, env, log))
    times: list[list[float]] = [[], [], [], []]
    for _ in range(rounds):
        for (module, arguments), samples in zip(sides, times, strict=True):
            launched = launch(module, arguments, env, log)
            samples.append(launched.seconds_to_ready)
            stop(launched)
    return tuple(statistics.median(samples) for samples in times)  # type: ignore[return-value]


def cpu_seconds(processes: list[psutil.Process]) -> float:
    return sum(sum(p.cpu_times()[:2]) for p in processes)


def settle(launched: list[Launched], quiet: float = 0.01, longest: float = 120.0) -> float:
    """Wait until each process tree uses under ``quiet`` CPU s per s, twice in a row; the
    seconds waited."""
    start, calm = time.monotonic(), 0
    before = [cpu_seconds(side.tree) for side in launched]
    while calm < 2 and time.monotonic() - start < longest:
        time.sleep(1.0)
        after = [cpu_seconds(side.tree) for side in launched]
        calm = calm + 1 if all(b - a < quiet for a, b in zip(before, after, strict=True)) else 0
        before = after
    return time.monotonic() - start


def rss_bytes(launched: Launched) -> int:
    """The process's RSS and the memory its helpers (the runner fork server and its spare,
    once a command has run) add: their unique set, since forked processes share most pages,
    which summed RSS would count twice."""
    root, *helpers = launched.tree
    return root.memory_info().rss + sum(p.memory_full_info().uss for p in helpers)


def voluntary_switches(launched: Launched) -> dict[tuple[int, int], int]:
    """Voluntary context switches of every thread of the tree, by (pid, thread id)."""
    counts = {}
    for process in launched.tree:
        tasks = Path(f"/proc/{process.pid}/task")
        if not tasks.is_dir():  # not Linux: psutil's per-process figure
            counts[(process.pid, process.pid)] = process.num_ctx_switches().voluntary
            continue
        for task in tasks.iterdir():
            switches = _status_field(task / "status", "voluntary_ctxt_switches")
            if switches is not None:
                counts[(process.pid, int(task.name))] = switches
    return counts


def _status_field(path: Path, name: str) -> int | None:
    try:
        text = path.read_text()
    except OSError:  # the thread ended meanwhile
        return None
    for line in text.splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    return None


def thread_label(launched: Launched, pid: int, tid: int) -> str:
    name = launched.threads.get(tid)
    if name is None:
        comm = Path(f"/proc/{pid}/task/{tid}/comm")
        name = comm.read_text().strip() if comm.exists() else "?"
    return f"{name} (pid {pid}, tid {tid})"


def per_thread(launched: Launched, before: dict[tuple[int, int], int],
               after: dict[tuple[int, int], int]) -> list[tuple[str, int]]:  # fmt: skip
    """Each thread's switches over the window, most first (threads that ended are lost)."""
    rows = [(thread_label(launched, *key), count - before.get(key, 0))
            for key, count in after.items()]  # fmt: skip
    return sorted(rows, key=lambda row: -row[1])


# -- the run --------------------------------------------------------------------------------
@dataclass
class IdleSample:
    switches: tuple[int, int]  # app, bare
    rss: tuple[int, int]
    rss_growth: tuple[int, int]  # over the window: an idle app should not grow
    cpu: tuple[float, float]
    settled_after: float
    threads: list[tuple[str, int]]
    floor_rss: int  # the bare app with qasync and the engine imported
    windowed_rss: int  # the app without a tray: its main window open


def measure_idle(env: dict[str, str], data_dir: Path, log: Path, seconds: float) -> IdleSample:
    app, bare = launch(APP, [str(data_dir), TRAY], env, log), launch(BARE, [], env, log)
    floor = launch(FLOOR, [], env, log)
    windowed = launch(APP, [str(data_dir)], env, log)
    try:
        settled_after = settle([app, bare, floor, windowed])
        rss = rss_bytes(app), rss_bytes(bare)
        floor_rss, windowed_rss = rss_bytes(floor), rss_bytes(windowed)
        stop(floor)  # before the window: the idle figures compare the app and bare only
        stop(windowed)
        cpu0 = cpu_seconds(app.tree), cpu_seconds(bare.tree)
        app0, bare0 = voluntary_switches(app), voluntary_switches(bare)
        time.sleep(seconds)
        app1, bare1 = voluntary_switches(app), voluntary_switches(bare)
        cpu = cpu_seconds(app.tree) - cpu0[0], cpu_seconds(bare.tree) - cpu0[1]
        growth = rss_bytes(app) - rss[0], rss_bytes(bare) - rss[1]
        threads = per_thread(app, app0, app1)
    finally:
        for extra in (floor, windowed):
            if extra.process.poll() is None:
                stop(extra)
        exits = stop(app), stop(bare)
    if exits != (0, 0):
        print(f"warning: exit codes app {exits[0]}, bare {exits[1]} (see the log)")
    switches = sum(app1.values()) - sum(app0.values()), sum(bare1.values()) - sum(bare0.values())
    return IdleSample(switches, rss, growth, cpu, settled_after, threads, floor_rss, windowed_rss)


def idle_figures(
    sample: IdleSample, launches: tuple[float, float, float, float], seconds: float
) -> list[Figure]:
    allowance = seconds / WAKE_ALLOWANCE_SECONDS
    app_sw, bare_sw = sample.switches
    return [
        delta_figure(f"idle engine: voluntary ctx switches / {seconds:g} s", "", app_sw, bare_sw,
                     allowance, note="summed over every thread of each process tree",
                     baseline_name="bare PySide6 tray app"),
        cost_figure("idle tray app: RSS, 1,000 routines", "MiB", sample.rss[0] / 2**20,
                    sample.rss[1] / 2**20, RSS_TARGET, note=OFFSCREEN_NOTE,
                    baseline_name="bare PySide6 tray app"),
        info_figure("  RSS floor: bare + qasync and the engine imported", "MiB",
                    sample.floor_rss / 2**20, sample.rss[1] / 2**20,
                    sample.floor_rss / sample.rss[1], baseline_name="bare (best reachable ratio)"),
        info_figure("  RSS without a tray (main window open)", "MiB",
                    sample.windowed_rss / 2**20, sample.rss[1] / 2**20,
                    sample.windowed_rss / sample.rss[1], baseline_name="bare PySide6 tray app"),
        cost_figure("launch to tray ready (median)", "ms", launches[0] * 1e3, launches[1] * 1e3,
                    LAUNCH_TARGET, note=OFFSCREEN_NOTE, baseline_name="bare PySide6 tray app"),
        info_figure("  launch floor: bare + qasync and the engine imported", "ms",
                    launches[2] * 1e3, launches[1] * 1e3, launches[2] / launches[1],
                    baseline_name="bare (best reachable ratio)"),
        info_figure("  launch without a tray (main window shown)", "ms", launches[3] * 1e3,
                    launches[1] * 1e3, launches[3] / launches[1],
                    baseline_name="bare PySide6 tray app"),
    ]  # fmt: skip


def report(sample: IdleSample, table: list[Figure], seconds: float) -> None:
    print(f"{OFFSCREEN_NOTE}; ratio = ours / bare, lower is better")
    print_table(table, "bare")
    print(f"settled after {sample.settled_after:.0f} s; CPU over the window: "
          f"app {sample.cpu[0] * 1e3:.0f} ms, bare {sample.cpu[1] * 1e3:.0f} ms")  # fmt: skip
    app_kib, bare_kib = (growth // 1024 for growth in sample.rss_growth)
    print(f"RSS growth over the window: app {app_kib:+} KiB, bare {bare_kib:+} KiB")
    print(f"app threads' voluntary switches over {seconds:g} s:")
    for label, count in sample.threads:
        print(f"  {count:>6}  {label}")


def measure(seconds: float, routines: int, launches: int) -> tuple[IdleSample, list[Figure]]:
    with scratch("idle-") as directory:
        temp = Path(directory)
        env, log, data_dir = child_environment(temp / "home"), temp / "stderr.log", temp / "data"
        schedule = create_routines(data_dir, routines)
        compile_sources()
        print(f"{routines} routines on '{schedule}' (UTC), next due in about 6 hours")
        launch_times = launch_seconds(env, data_dir, log, launches)
        sample = measure_idle(env, data_dir, log, seconds)
    return sample, idle_figures(sample, launch_times, seconds)


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``benchmarks/suite.py``). The quick pass idles 20 s instead
    of the issue's 60 s; the allowance (one wakeup per 30 s) scales with the window."""
    seconds = 20.0 if quick else 60.0
    sample, table = measure(seconds, 1000, 3 if quick else 5)
    report(sample, table, seconds)
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="the idle window")
    parser.add_argument("--routines", type=int, default=1000)
    parser.add_argument("--launches", type=int, default=5, help="measured launches per side")
    parser.add_argument("--json", type=Path, default=ROOT / "benchmarks/results/idle.json")
    args = parser.parse_args()
    sample, table = measure(args.seconds, args.routines, args.launches)
    report(sample, table, args.seconds)
    write_json(table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
