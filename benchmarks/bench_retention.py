"""Retention over a simulated year of a minutely routine (issues #5 and #9).

growth:  a year of a minutely routine's history, written the way the engine writes it (the
         helper the tests use: per minute an occurrence, its attempt, its delivery receipt, five
         events, two pass records), then one sweep under the default policy: rows left against
         the policy's bound for that history.
lock:    how long each of the sweep's write transactions held the write lock (BEGIN IMMEDIATE
         returning → COMMIT done), for the year's catch-up sweep and for the daily sweep after it.
claims:  meanwhile a second process makes a claim-sized write transaction every 5 ms; its
         latency during the sweep (its latency just before, the disk's floor, is printed).
disk:    meanwhile a third process fdatasyncs 4 KiB in a file of its own every 50 ms: the disk's
         fsync with no SQLite lock in it, the floor of any COMMIT that waits for the disk.

Lock holds and claims are held to 10 ms, the issue's target for a hold that no one notices.
Each hold is split into the sweep's own work and its COMMIT.

What the catch-up's longest hold was (issue #9). With every COMMIT at synchronous=FULL the
longest of its 8,819 transactions was 243 ms once, 54–85 ms in three runs here, with a p99
of 10–25 ms; the transactions behind those maxima were a COMMIT waiting on the fsync of
the log (53 ms of COMMIT after 0.64 ms of work, 40 ms after 5.4 ms), not a big DELETE and
not a checkpoint (the sweep defers the WAL module's checkpoint and times its own apart).
The disk alone has that tail: the probe's fdatasync peaked at 232 ms during one sweep and
52 ms in the two seconds before it. So the sweep now commits with synchronous=NORMAL
(:func:`coven_core.integrity.retention._commits_unsynced` says why that loses nothing): longest hold
9.9 and 20.2 ms in two runs, p99 5.3 and 7.7 ms, median 1.7–1.8 ms (was 3.1–4.4), the sweep
116–121 s (was 173–245 s), the longest hold now the sweep's own work (9.1 and 15.6 ms).
History transactions, the slowest work (p50 3.4 ms, events and passes 1.2 ms: an
occurrence's rows keep eight indexes), took half a batch: p99 3.6 ms, work p99 2.8 ms,
longest 10.5 ms (9.8 ms of work, 0.65 ms COMMIT) in 11,205 transactions, while the disk's
own fsync peaked at 255 ms; the next run: longest 13.3 ms (p99 4.4 ms, work p99 3.4 ms),
of which this thread was on a CPU 6.2 ms and its COMMIT (no fsync) took 3.2 ms, while the
disk's fsync peaked at 134 ms.

Then (issue #9, third round) each table's transactions are sized from how long the last ones
took (:class:`coven_core.scheduling.batching.Pace`, ~2 ms of work each: the longest holds had been
the
sweep's own work), and the sweep checkpoints once its log holds 4,000 pages rather than every
16 transactions. Why the latter: strace shows SQLite fdatasyncs the log in the first COMMIT
after a complete checkpoint, even at synchronous=NORMAL (it writes the restarted log's
header); under a loaded disk one such COMMIT held the lock 94.6 ms after 0.86 ms of work.
Each hold now records whether its COMMIT restarted the log (the header's checkpoint sequence
number, read around it). In the full suite's run (load ~1): 13,352 transactions, none of them
a restart (the claimer's next write, which fsyncs anyway, restarted the log each time), p99
2.82 ms, work p99 2.24 ms, longest 12.15 ms: 1.37 ms of work, 1.85 ms on a CPU, and a COMMIT
of 10.78 ms with no fsync in it — its writes of the log waiting on a disk whose own fsync
peaked at 34.5 ms meanwhile (4.5 ms before the sweep); a second run, 11.47 ms: 2.31 ms on a
CPU, the rest off it. The disk probe, then fdatasyncing every 5 ms, was itself load on that
disk: with it every 50 ms (``PROBE_EVERY``; the claimer unchanged) three runs gave 6.60
(probe at 0.5 s), 9.45 and 6.39 ms, p99 2.67–2.94 ms. The row stays judged at 10 ms, and the
margin is thin: the longest hold is this thread waiting on the machine, not its own work.

The Runs page at the bound: the read of its first page (the newest 50 runs) for all routines,
against the same read for the one routine, which its own index has always served. Without an
index in (scheduled_utc, id) order SQLite read every occurrence left, with its attempts'
subqueries, before keeping 50: 495–508 ms against 0.2–0.7 ms at 129,600 occurrences (migration
``0017_runs_order``).

Run: python3 benchmarks/bench_retention.py [--days N] [--json PATH]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import apsw

from benchmarks.harness import (
    Figure,
    bound_figure,
    cost_figure,
    info_figure,
    print_table,
    side_by_side,
    write_json,
)
from coven_core.clock import VirtualClock, WakeSignal
from coven_core.integrity.retention import RetentionPolicy, SweepReport, growth, sweep
from coven_core.model import RevisionSpec
from coven_core.operator import Operator
from coven_core.store.connection import open_connection
from coven_core.store.query import scalar
from coven_core.store.store import Store
from coven_core.views.runs import runs
from tests.core.integrity.test_retention import write_history

NOW = datetime(2026, 3, 1, tzinfo=UTC)
LOCK_TARGET_MS = 10.0
RUNS_PAGE_TARGET = 2.0  # all routines against one: an index read either way
CLAIM_EVERY = 0.005
# The disk probe samples ten times less often than the claimer writes. At every 5 ms its own
# fdatasync was load on the disk it measures: the catch-up's longest hold was 12.15 and
# 11.47 ms in two runs beside it, 6.60 ms in one with the probe nearly off (issue #9), while
# the claimer (the realistic other writer) is unchanged.
PROBE_EVERY = 0.05


class TimedStore(Store):
    """A store that remembers how long each write transaction held the lock, and how much of
    that was its COMMIT (writing the log; at synchronous=NORMAL no fsync unless it restarts it)."""

    holds: list[float]
    commits: list[float]
    on_cpu: list[float]  # of each hold, the time this thread was on a CPU
    restarts: list[bool]  # of each hold, whether its COMMIT started the log over

    @contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        log_before = self.log_generation()
        with super().write() as conn:
            began, cpu = time.perf_counter(), time.thread_time()
            yield conn
            worked = time.perf_counter()
        ended = time.perf_counter()
        self.holds.append(ended - began)
        self.commits.append(ended - worked)
        self.on_cpu.append(time.thread_time() - cpu)
        self.restarts.append(self.log_generation() != log_before)

    def log_generation(self) -> bytes:
        """The WAL header's checkpoint sequence number, which SQLite raises each time a writer
        starts the log over (and then fsyncs the new header, even at synchronous=NORMAL)."""
        try:
            with open(f"{self.path}-wal", "rb") as log:
                return log.read(16)[12:16]
        except FileNotFoundError:
            return b""

    def forget(self) -> None:
        for measured in (self.holds, self.commits, self.on_cpu, self.restarts):
            measured.clear()


def build(directory: Path, days: int) -> tuple[TimedStore, str]:
    start = NOW - timedelta(days=days)
    store = TimedStore.open(directory, start)
    store.holds, store.commits, store.on_cpu, store.restarts = [], [], [], []
    spec = RevisionSpec(schedule="* * * * *", timezone="UTC", argv=("/bin/true",))
    routine_id = Operator(store, VirtualClock(start), WakeSignal().set).add_routine(
        "minutely", spec
    )
    write_history(store, routine_id, start, days * 24 * 60)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store, routine_id


def claimer(path: str, stop: Any, out: Any) -> None:
    """Another process's claims: one small write transaction every 5 ms, timed whole."""
    conn = open_connection(Path(path))
    conn.execute("CREATE TABLE IF NOT EXISTS bench_claims (id INTEGER PRIMARY KEY, at REAL)")
    samples = []
    while not stop.is_set():
        began = time.monotonic()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT OR REPLACE INTO bench_claims VALUES (1, ?)", (began,))
        conn.execute("COMMIT")
        samples.append((began, time.monotonic() - began))
        time.sleep(CLAIM_EVERY)
    conn.close()
    out.put(samples)


def disk_prober(path: str, stop: Any, out: Any) -> None:
    """The disk's own fsync, beside the store: 4 KiB overwritten and fdatasync'ed every 50 ms in
    a file of its own, so no SQLite lock is in it. A COMMIT's fsync cannot be quicker."""
    samples = []
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    page = b"\0" * 4096
    while not stop.is_set():
        began = time.monotonic()
        os.pwrite(descriptor, page, 0)
        os.fdatasync(descriptor)
        samples.append((began, time.monotonic() - began))
        time.sleep(PROBE_EVERY)
    os.close(descriptor)
    out.put(samples)


def sweep_beside_claims(store: TimedStore, policy: RetentionPolicy) -> tuple[SweepReport, dict]:
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    probes = {"claims": (claimer, str(store.path)),
              "disk": (disk_prober, str(store.data_dir / "disk-probe"))}  # fmt: skip
    running = {}
    for name, (target, path) in probes.items():
        out = context.Queue()
        process = context.Process(target=target, args=(path, stop, out), daemon=True)
        process.start()
        running[name] = (process, out)
    try:
        time.sleep(3.0)  # the probes start up, then run alone: the baseline
        began = time.monotonic()
        report = sweep(store, NOW, policy)
        ended = time.monotonic()
    finally:
        stop.set()
    found = {}
    for name, (process, out) in running.items():
        samples = out.get(timeout=60)
        process.join()
        found[name] = {
            "before": [took for at, took in samples if began - 2.0 < at < began],
            "during": [took for at, took in samples if began <= at < ended],
        }
    return report, found


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def bounds(policy: RetentionPolicy, days: int, protected: int = 0) -> dict[str, int]:
    """The most rows the policy allows for this history (one minutely routine)."""
    minutes = min(days, policy.history_keep_for.days) * 24 * 60
    history = min(max(policy.history_keep_newest, minutes), policy.history_max_rows)
    return {
        "occurrences": history + protected,
        "events": policy.events_max_rows,
        "passes": policy.passes_max_rows,
    }


def growth_figures(store: Store, policy: RetentionPolicy, days: int) -> list[Figure]:
    tables = growth(store)["tables"]
    return [
        bound_figure(f"store growth, {days} days minutely: {table} left", "",
                     tables[table]["rows"], bound, baseline_name="the default policy's bound")
        for table, bound in bounds(policy, days).items()
    ]  # fmt: skip


def lock_figures(name: str, holds: list[float]) -> list[Figure]:
    longest, p99 = max(holds) * 1e3, percentile(holds, 0.99) * 1e3
    return [
        bound_figure(f"retention {name}: longest write-lock hold", "ms", longest,
                     LOCK_TARGET_MS, baseline_name="10 ms per transaction",
                     note=f"{len(holds):,} transactions"),
        info_figure(f"  {name}: p99 write-lock hold", "ms", p99, LOCK_TARGET_MS,
                    p99 / LOCK_TARGET_MS, baseline_name="10 ms"),
    ]  # fmt: skip


def claim_figures(claims: dict[str, list[float]]) -> list[Figure]:
    """Another process's claim latency during the sweep, against the same 10 ms a person would
    not notice (its latency before the sweep, the floor, is printed beside it)."""
    figures = []
    for label, share in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
        during = percentile(claims["during"], share) * 1e3
        floor = percentile(claims["before"], share) * 1e3
        figures.append(info_figure(f"  another process's claim during it, {label}", "ms",
                                   during, floor, during / floor,
                                   baseline_name="the same claim before the sweep"))  # fmt: skip
    return figures


def commit_figures(store: TimedStore, disk: dict[str, list[float]]) -> list[Figure]:
    """What the longest hold was made of: its COMMIT (writing the log) against the sweep's own
    work, and the disk's own fsync in the same seconds (in another file, no lock in it)."""
    longest = max(range(len(store.holds)), key=store.holds.__getitem__)
    worked = [hold - commit for hold, commit in zip(store.holds, store.commits, strict=True)]
    commit, work = store.commits[longest] * 1e3, worked[longest] * 1e3
    fsync_max = max(disk["during"]) * 1e3
    work_p99 = percentile(worked, 0.99) * 1e3
    return [
        info_figure("  longest hold: its COMMIT (writing the log)", "ms", commit, work,
                    commit / work if work else float("nan"), baseline_name="its own work"),
        info_figure("  longest hold: this thread on a CPU", "ms", store.on_cpu[longest] * 1e3,
                    store.holds[longest] * 1e3, store.on_cpu[longest] / store.holds[longest],
                    baseline_name="the hold"),
        info_figure("  the disk's own fsync during it (no lock), max", "ms", fsync_max,
                    max(disk["before"]) * 1e3, fsync_max / (max(disk["before"]) * 1e3),
                    baseline_name="the same before the sweep"),
        info_figure("  a transaction's own work (COMMIT aside), p99", "ms", work_p99,
                    LOCK_TARGET_MS, work_p99 / LOCK_TARGET_MS, baseline_name="10 ms"),
    ]  # fmt: skip


def restart_figures(store: TimedStore, disk: dict[str, list[float]]) -> list[Figure]:
    """The holds split by whether their COMMIT started the write-ahead log over: SQLite fsyncs
    the new log header inside that COMMIT whatever the sync mode, so those holds wait on the
    disk (its own fsync in the same seconds beside them); every other hold is the sweep's."""
    restarted = [h for h, r in zip(store.holds, store.restarts, strict=True) if r]
    others = [h for h, r in zip(store.holds, store.restarts, strict=True) if not r]
    fsync_p99 = percentile(disk["during"], 0.99) * 1e3
    figures = [
        info_figure(
            "  holds that did not restart the log: longest",
            "ms",
            max(others, default=0.0) * 1e3,
            LOCK_TARGET_MS,
            max(others, default=0.0) * 1e3 / LOCK_TARGET_MS,
            baseline_name="10 ms",
            note=f"{len(others):,} transactions",
        )
    ]
    if restarted:
        figures.append(
            info_figure(
                "  holds that restarted the log (an fsync each): p99",
                "ms",
                percentile(restarted, 0.99) * 1e3,
                fsync_p99,
                percentile(restarted, 0.99) * 1e3 / fsync_p99,
                baseline_name="the disk's own fsync meanwhile, p99",
                note=f"{len(restarted):,} transactions",
            )
        )
    return figures  # fmt: skip


def daily_sweep(store: TimedStore, routine_id: str, policy: RetentionPolicy) -> SweepReport:
    """The steady state: one more day of history, then the sweep a machine runs each day."""
    write_history(store, routine_id, NOW, 24 * 60)
    store.forget()
    return sweep(store, NOW + timedelta(days=1), policy)


def print_latency(what: str, values: list[float]) -> None:
    shown = ", ".join(f"{label} {percentile(values, share) * 1e3:.2f} ms"
                      for label, share in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)))  # fmt: skip
    print(f"{what} ({len(values)} samples): {shown}")


def describe(name: str, report: SweepReport, holds: list[float]) -> None:
    deleted = ", ".join(f"{table} {rows:,}" for table, rows in report.deleted.items())
    print(f"{name}: {report.duration:.1f} s, {report.transactions:,} transactions "
          f"(median hold {statistics.median(holds) * 1e3:.2f} ms, longest checkpoint "
          f"{report.longest_checkpoint * 1e3:.1f} ms, most rows {report.most_rows_in_transaction})"
          f"; deleted {deleted}")  # fmt: skip


def run(days: int) -> list[Figure]:
    policy = RetentionPolicy()
    (Path.cwd() / "build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=Path.cwd() / "build") as directory:
        started = time.perf_counter()
        store, routine_id = build(Path(directory) / "data", days)
        before = growth(store)["file_bytes"]
        print(f"built {days} days in {time.perf_counter() - started:.0f} s: {before / 1e6:.0f} MB")
        store.forget()
        report, probes = sweep_beside_claims(store, policy)
        claims, catch_up = probes["claims"], list(store.holds)
        describe("catch-up sweep", report, catch_up)
        print_latency("the floor, a claim before the sweep", claims["before"])
        print_latency("a claim during the sweep", claims["during"])
        print_latency("the disk's own fsync during the sweep", probes["disk"]["during"])
        figures = growth_figures(store, policy, days)
        catch_up_figures = lock_figures("catch-up sweep", catch_up)
        catch_up_figures += commit_figures(store, probes["disk"])
        catch_up_figures += restart_figures(store, probes["disk"]) + claim_figures(claims)
        daily = daily_sweep(store, routine_id, policy)
        describe("daily sweep", daily, store.holds)
        figures += lock_figures("daily sweep", store.holds) + catch_up_figures
        figures += runs_page_figures(store)
        found = growth(store)
        print(f"file {found['file_bytes'] / 1e6:.0f} MB, of it free {found['free_bytes'] / 1e6:.0f}"
              " MB (reused before the file grows)")  # fmt: skip
        store.close()
    return figures


def runs_page_figures(store: Store) -> list[Figure]:
    """The Runs page's first read at the bound: every routine's newest runs, against the one
    routine's (see the module's docstring)."""
    every, one = side_by_side(lambda: runs(store), lambda: runs(store, "minutely"),
                              rounds=7, repeat=3)  # fmt: skip
    left = scalar(store.conn, "SELECT count(*) FROM occurrences")
    return [cost_figure("Runs page at the bound: newest 50, all routines", "ms", every * 1e3,
                        one * 1e3, RUNS_PAGE_TARGET, baseline_name="the same for one routine",
                        note=f"{left:,} occurrences")]  # fmt: skip


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``benchmarks/suite.py``): a year, or 120 days (past every
    age bound of the default policy) for the quick pass."""
    days = 120 if quick else 365
    print(f"a minutely routine for {days} simulated days, the default retention policy")
    return run(days)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/retention.json"))
    args = parser.parse_args()
    print(f"a minutely routine for {args.days} simulated days, the default retention policy")
    figures = run(args.days)
    print_table(figures, "bound")
    write_json(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
