"""End-to-end dispatch through the runner, against a bare subprocess.run (issue #4).

dispatch: one occurrence at a time — claimed, the runner started, ``/bin/true`` run by it,
          its exit journaled, observed and settled — against ``subprocess.run(["/bin/true"])``,
          interleaved in one run; the ratio is the bare rate's share we reach. Each side is
          timed after its first attempt: the store, the fork server and the pooled runner are
          made once per app, and timing them with 20–40 attempts added ~2 ms to each (their
          setup is ~80 ms), measuring the app's start rather than a dispatch.
start lag: 100 routines due at the same instant with concurrency 4, on the real clock:
          scheduled instant → the runner's journal says the command was spawned.

floor:    the least work DESIGN §8, §9 require of one attempt, done inline in this
          process (no runner process, no Python start): the dispatch decision committed, the
          journal created with its first record and ``intent`` (not waited onto the disk: the
          claim's boot covers a restart of the machine, ``runner.journal``), the spawn,
          ``subprocess.run`` with its output through pipes, ``spawned`` and the directory
          fsync'd for the journal's name, a file for each stream that said anything, fsync'd
          with its name, before the ``exited`` record, that record fsync'd, the settlement
          committed — two commits and two fsyncs for ``/bin/true``, as the runner does them,
          on the same disk and store settings (WAL, synchronous=FULL). ``bare / floor`` is
          the best ratio any design that keeps those promises could reach here;
          ``floor / ours`` is how close we are to it.

Run: python3 benchmarks/bench_dispatch.py [--occurrences N] [--rounds N] [--routines N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    Figure,
    info_figure,
    interleaved,
    print_table,
    scratch,
    timed,
    write_json,
)
from coven_core.clock import SystemClock, VirtualClock, WakeReason, WakeSignal
from coven_core.model import RevisionSpec
from coven_core.operator import Operator
from coven_core.runner.journal import fsync_directory, read_journal
from coven_core.runtime.runner import RunnerRuntime
from coven_core.scheduling.scheduler import Limits, Scheduler
from coven_core.store.connection import open_connection
from coven_core.store.store import Store

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TRUE = ("/bin/true",)
#: Issue #24's target: issue #9 asked 0.5× before the floor was measured, at about 0.3×.
TARGET = 0.25


def dispatch_through_runner(directory: Path, count: int) -> float:
    """Seconds for ``count`` dispatches, after a first one that forks the fork server and the
    pooled runner: the store, the fork server and the runner are made once per app, not per
    attempt, so the figure is what each scheduled moment costs."""
    clock, wake = VirtualClock(T0), WakeSignal()
    store = Store.open(directory, T0)
    spec = RevisionSpec(schedule="* * * * *", timezone="UTC", argv=TRUE)
    Operator(store, clock, wake.set).add_routine("true", spec)
    runtime = RunnerRuntime(clock, wake, directory / "attempts")
    scheduler = Scheduler(store, clock, runtime, wake)
    _dispatch_one(scheduler, clock, wake)
    elapsed = timed(lambda: _dispatch_one(scheduler, clock, wake), count) * count
    runtime.close()  # its pooled runner and the fork server leave with it
    store.close()
    return elapsed


def _dispatch_one(scheduler: Scheduler, clock: VirtualClock, wake: WakeSignal) -> None:
    clock.advance(timedelta(minutes=1))
    wake.take()
    scheduler.pass_once("deadline")
    _wait_for_exit(wake)
    scheduler.pass_once("run_finished")


def _wait_for_exit(wake: WakeSignal) -> None:
    with wake.condition:
        if not wake.condition.wait_for(wake.is_set, timeout=30):
            raise TimeoutError("the runner did not report an exit")
    wake.take()


def bare(count: int) -> None:
    for _ in range(count):
        subprocess.run(TRUE, check=True)


def floor(directory: Path, count: int) -> float:
    """Seconds for ``count`` attempts doing only the durable work the contract requires (see
    above), after a first one, as ``dispatch_through_runner`` has."""
    conn = floor_store(directory)
    floor_attempt(conn, directory, count)
    attempts = iter(range(count))
    elapsed = timed(lambda: floor_attempt(conn, directory, next(attempts)), count) * count
    conn.close()
    return elapsed


def floor_store(directory: Path):  # type: ignore[no-untyped-def]
    directory.mkdir(mode=0o700)
    conn = open_connection(directory / "floor.db")
    conn.execute("CREATE TABLE attempts (id INTEGER PRIMARY KEY, state TEXT, code INTEGER)")
    return conn


def floor_attempt(conn, directory: Path, index: int, on_start=None) -> None:  # type: ignore[no-untyped-def]
    """One attempt of the floor; ``on_start()`` is called just before the command starts."""
    _commit(conn, "INSERT INTO attempts VALUES (?, 'dispatching', NULL)", (index,))
    attempt = directory / str(index)
    attempt.mkdir()
    journal = os.open(attempt / "journal.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND)
    _append(journal, {"event": "runner_started", "runner_pid": os.getpid()}, sync=False)
    _append(journal, {"event": "intent"}, sync=False)
    if on_start is not None:
        on_start()
    done = subprocess.run(TRUE, capture_output=True, check=False)
    _append(journal, {"event": "spawned", "pid": 0}, sync=False)
    fsync_directory(attempt)  # the journal's name
    keep_outputs(attempt, {"stdout": done.stdout, "stderr": done.stderr})
    _append(journal, {"event": "exited", "exit_code": done.returncode})  # and all before it
    os.close(journal)
    _commit(conn, "UPDATE attempts SET state = 'settled', code = ? WHERE id = ?",
            (done.returncode, index))  # fmt: skip


def keep_outputs(directory: Path, outputs: dict[str, bytes]) -> None:
    """Make the command's outputs durable before its exit is journaled: a file for each
    stream that said anything (a command that prints nothing leaves none), and their names."""
    kept = {name: data for name, data in outputs.items() if data}
    for name, data in kept.items():
        with open(directory / name, "wb") as output:
            output.write(data)
            output.flush()
            os.fsync(output.fileno())
    if kept:
        fsync_directory(directory)


def runner_floor_attempt(conn, directory: Path, index: int, runner) -> float:  # type: ignore[no-untyped-def]
    """One attempt of the floor with its runner work in a forked runner process
    (:mod:`benchmarks.runner_floor`); the epoch instant just before the command's spawn."""
    _commit(conn, "INSERT INTO attempts VALUES (?, 'dispatching', NULL)", (index,))
    attempt = directory / str(index)
    attempt.mkdir()
    spawned_at = runner.run(attempt)
    _commit(conn, "UPDATE attempts SET state = 'settled', code = 0 WHERE id = ?", (index,))
    return float(spawned_at)


def _append(fd: int, record: dict[str, object], *, sync: bool = True) -> None:
    os.write(fd, (json.dumps(record) + "\n").encode())
    if sync:
        os.fsync(fd)


def _commit(conn, statement: str, params: tuple[object, ...]) -> None:  # type: ignore[no-untyped-def]
    conn.execute("BEGIN IMMEDIATE")
    conn.execute(statement, params)
    conn.execute("COMMIT")


def in_temp(action, count: int):  # type: ignore[no-untyped-def]
    def run() -> float:
        with scratch("dispatch-") as directory:
            return float(action(directory / "data", count)) / count

    return run


def dispatch_figures(count: int, rounds: int) -> list[Figure]:
    """Ours, bare and the floor, interleaved A B C A B C …; medians."""
    ours, floors = in_temp(dispatch_through_runner, count), in_temp(floor, count)
    samples: dict[str, list[float]] = {"ours": [], "bare": [], "floor": []}

    def floor_and_bare() -> float:
        samples["floor"].append(floors())
        return timed(lambda: bare(count), 1) / count

    samples["ours"], samples["bare"] = interleaved(ours, floor_and_bare, rounds=rounds)
    samples["floor"] = samples["floor"][1:]  # the warm-up call's
    mine, base, least = (statistics.median(samples[k]) * 1e3 for k in ("ours", "bare", "floor"))
    return [
        Figure("dispatch /bin/true end to end", "ms", mine, base, base / mine, TARGET,
               baseline_name="bare subprocess.run"),
        info_figure("  floor: subprocess.run + §8's fsyncs, 2 commits", "ms", least, base,
                    base / least, baseline_name="bare subprocess.run (best reachable ratio)"),
        info_figure("  dispatch against that floor", "ms", mine, least, least / mine,
                    baseline_name="the floor"),
    ]  # fmt: skip


def start_lags(routines: int, concurrency: int) -> list[float]:
    """Seconds from the scheduled instant to the command's spawn, for each routine."""
    with scratch("lags-") as directory:
        real_now = datetime.now(UTC)
        target = (real_now + timedelta(minutes=2)).replace(second=0, microsecond=0)
        offset = (target - timedelta(seconds=1)) - real_now
        clock = SystemClock(offset=offset)
        store, wake = Store.open(Path(directory) / "data", clock.now_utc()), WakeSignal()
        operator = Operator(store, clock, wake.set)
        for index in range(routines):
            spec = RevisionSpec(f"once {target:%Y-%m-%dT%H:%M}", "UTC", TRUE)
            operator.add_routine(f"r{index:03d}", spec)
        runtime = RunnerRuntime(clock, wake, Path(directory) / "attempts")
        limits = Limits(max_active=concurrency, claim_batch=routines, plan_batch=routines)
        watcher = Store.open(Path(directory) / "data", clock.now_utc())  # a connection per thread
        _run_until_settled(Scheduler(store, clock, runtime, wake, limits=limits), watcher, routines)
        runtime.close()
        # The runners journal the real wall clock; the target was set on the shifted one.
        return _lags(Path(directory) / "attempts", target - offset)


def _run_until_settled(scheduler: Scheduler, store: Store, routines: int) -> None:
    loop = threading.Thread(target=scheduler.run, daemon=True)
    loop.start()
    done = "SELECT count(*) FROM occurrences WHERE state = 'settled'"
    while True:
        with scheduler.wake.condition:
            scheduler.wake.condition.wait(0.2)  # real-time: polling the benchmark's own store
        if store.conn.execute(done).fetchone()[0] >= routines:
            break
    scheduler.wake.set(WakeReason.SHUTDOWN)
    loop.join(30)


def _lags(attempts: Path, target: datetime) -> list[float]:
    lags = []
    for journal_path in attempts.glob("*/journal.jsonl"):
        spawned = read_journal(journal_path).spawned_at
        if spawned is not None:
            lags.append((spawned - target).total_seconds())
    return sorted(lags)


def percentile(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(share * len(values)))]


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``benchmarks/suite.py``)."""
    return dispatch_figures(20 if quick else 40, 3 if quick else 5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--occurrences", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--routines", type=int, default=100)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/dispatch.json"))
    args = parser.parse_args()
    table = dispatch_figures(args.occurrences, args.rounds)
    print_table(table, "subprocess")
    lags = start_lags(args.routines, 4)
    p50, p99 = statistics.median(lags), percentile(lags, 0.99)
    print(f"start lag, {len(lags)} routines due at once, concurrency 4: "
          f"p50 {p50 * 1e3:.0f} ms, p99 {p99 * 1e3:.0f} ms")  # fmt: skip
    write_json(table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
