"""The engine's bookkeeping per occurrence against raw apsw, side by side (issue #3).

ours:     a minutely routine driven by the real scheduler under a virtual clock with a runtime
          whose commands end at once: every occurrence is planned, claimed, its dispatch
          decision and start recorded, and settled — with leases, events and pass records.
baseline: raw apsw doing the minimal equivalent transactions per occurrence (insert planned;
          claim + attempt; running; settled) on the same kind of file: WAL, synchronous=FULL.

Both write real files with fsync, which dominates; the ratio is baseline time / our time.
Run: python3 benchmarks/bench_bookkeeping.py [--occurrences N] [--rounds N]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import Figure, print_table, side_by_side, write_json
from coven_core.clock import VirtualClock, WakeSignal
from coven_core.model import RevisionSpec
from coven_core.operator import Operator
from coven_core.runtime.instant import InstantRuntime
from coven_core.scheduler import Scheduler
from coven_core.store.connection import open_connection
from coven_core.store.store import Store

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def run_engine(directory: Path, count: int) -> None:
    clock, wake = VirtualClock(T0), WakeSignal()
    store = Store.open(directory, T0)
    spec = RevisionSpec(schedule="* * * * *", timezone="UTC", argv=("/bin/true",))
    Operator(store, clock, wake.set).add_routine("minutely", spec)
    wake.take()
    scheduler = Scheduler(store, clock, InstantRuntime(clock, wake), wake)
    scheduler.pass_once("startup")
    end = T0 + timedelta(minutes=count - 1)
    while clock.now_utc() <= end:
        reason = wake.take()
        if reason is not None:
            scheduler.pass_once(reason.value)
            continue
        clock.advance_to(scheduler.deadline or end)
        scheduler.pass_once("deadline")
    store.close()


RAW_SCHEMA = (
    "CREATE TABLE occurrences (id TEXT PRIMARY KEY, routine_id TEXT, scheduled_utc TEXT, "
    "state TEXT, disposition TEXT, run_id TEXT)",
    "CREATE INDEX occurrences_due ON occurrences (scheduled_utc) WHERE state = 'planned'",
    "CREATE TABLE attempts (id TEXT PRIMARY KEY, occurrence_id TEXT, state TEXT, "
    "claimed_at TEXT, started_at TEXT, exit_code INTEGER)",
)


def run_raw(directory: Path, count: int) -> None:
    directory.mkdir(mode=0o700)
    conn = open_connection(directory / "raw.db")
    for statement in RAW_SCHEMA:
        conn.execute(statement)
    for index in range(count):
        oid, at = f"r@{index}", (T0 + timedelta(minutes=index)).isoformat()
        _tx(conn, "INSERT INTO occurrences VALUES (?, 'r', ?, 'planned', NULL, NULL)", (oid, at))
        _tx(conn, "UPDATE occurrences SET state = 'claimed', run_id = ? WHERE id = ?", (oid, oid),
            "INSERT INTO attempts VALUES (?, ?, 'claimed', ?, NULL, NULL)",
            (oid, oid, at))  # fmt: skip
        _tx(conn, "UPDATE attempts SET state = 'running', started_at = ? WHERE id = ?", (at, oid))
        _tx(conn, "UPDATE attempts SET state = 'settled', exit_code = 0 WHERE id = ?", (oid,),
            "UPDATE occurrences SET state = 'settled', disposition = 'succeeded' WHERE id = ?",
            (oid,))  # fmt: skip
    conn.close()


def _tx(conn, *statements_and_params) -> None:  # type: ignore[no-untyped-def]
    conn.execute("BEGIN IMMEDIATE")
    pairs = zip(statements_and_params[::2], statements_and_params[1::2], strict=True)
    for statement, params in pairs:
        conn.execute(statement, params)
    conn.execute("COMMIT")


def in_fresh_dir(action, count: int):  # type: ignore[no-untyped-def]
    def run() -> None:
        with tempfile.TemporaryDirectory(dir=Path.cwd() / "build") as directory:
            action(Path(directory) / "data", count)

    return run


def run(count: int, rounds: int) -> list[Figure]:
    (Path.cwd() / "build").mkdir(exist_ok=True)
    ours, base = side_by_side(
        in_fresh_dir(run_engine, count), in_fresh_dir(run_raw, count), rounds=rounds, repeat=1
    )
    per_ours, per_base = ours / count * 1e3, base / count * 1e3
    return [Figure("bookkeeping per occurrence", "ms", per_ours, per_base, base / ours, 0.5,
                   baseline_name="raw apsw, same journal and sync")]  # fmt: skip


def figures(quick: bool) -> list[Figure]:
    """The suite's entry point (``benchmarks/suite.py``)."""
    return run(100 if quick else 200, 3 if quick else 5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--occurrences", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, default=Path("benchmarks/results/bookkeeping.json"))
    args = parser.parse_args()
    print(f"{args.occurrences} occurrences per run, {args.rounds} interleaved rounds, medians")
    figures = run(args.occurrences, args.rounds)
    print_table(figures, "raw apsw")
    write_json(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
