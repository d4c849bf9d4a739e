"""What a pass, a claim and a person's Run now read must not grow with what waits or what is
kept (issue #24): counted in SQLite's own steps, the same on any host."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw

from coven_core.clock import VirtualClock
from coven_core.operations import runs
from coven_core.scheduling import agenda, decisions, occurrences
from coven_core.store.codec import instant_text
from tests.core.conftest import T0, Engine, make_engine, minutes

#: A deeper b-tree takes a few steps more; walking the rows takes thousands.
GROWTH = 1.5


def vm_steps(conn: apsw.Connection, read: Callable[[], object]) -> int:
    """How many steps SQLite's virtual machine takes for ``read`` (a progress handler called
    at every step)."""
    steps = 0

    def step() -> bool:
        nonlocal steps
        steps += 1
        return False  # go on

    conn.set_progress_handler(step, 1)
    try:
        read()
    finally:
        conn.set_progress_handler(None)
    return steps


def burst_costs(tmp_path: Path, moments: int) -> tuple[int, int]:
    """``moments`` routines due at once and one slot: one runs, the rest wait as planned rows.
    The steps of the pass's agenda, and of the claim context of a routine that waits."""
    engine = make_engine(tmp_path / f"burst-{moments}", VirtualClock(T0), max_active=1)
    engine.runtime.auto_exit = None  # the first command keeps the slot
    for index in range(moments):
        engine.add(f"r{index:03d}", "1 12 * * *")
    engine.run_until(T0 + minutes(2))
    conn, now = engine.store.conn, instant_text(engine.clock.now_utc())
    waiting = conn.execute(
        "SELECT routine_id FROM occurrences WHERE state = 'planned' ORDER BY scheduled_utc DESC"
    ).fetchall()
    assert len(waiting) == moments - 1
    routine = waiting[0][0]
    try:
        return (
            vm_steps(conn, lambda: conn.execute(agenda._SQL, {"now": now, "generation": 1}).fetchall()),
            vm_steps(conn, lambda: conn.execute(decisions._CLAIM_CONTEXT, (routine, True)).fetchall()),
        )  # fmt: skip
    finally:
        engine.store.close()


def test_a_burst_waiting_for_slots_costs_a_pass_and_a_claim_no_more(tmp_path: Path) -> None:
    """While a burst waits, each pass reads its agenda and each claim its routine's context:
    neither may walk the waiting rows, or n moments due at once cost n² (bench_apscheduler's
    drain: 0.17 ms a claim at the start of 1,000 due at once, through every planned row)."""
    (few_agenda, few_claim), (many_agenda, many_claim) = costs = [
        burst_costs(tmp_path, moments) for moments in (3, 300)
    ]
    assert many_agenda <= GROWTH * few_agenda, costs
    assert many_claim <= GROWTH * few_claim, costs


def with_history(engine: Engine, routine_id: str, count: int) -> None:
    """``count`` more settled runs of the routine, copies of its first."""
    conn = engine.store.conn
    columns = [row[1] for row in conn.execute("PRAGMA table_info(occurrences)")]
    first = conn.execute(
        "SELECT * FROM occurrences WHERE routine_id = ? AND state = 'settled' LIMIT 1",
        (routine_id,),
    ).fetchone()
    insert = (f"INSERT INTO occurrences ({', '.join(columns)}) "
              f"VALUES ({', '.join('?' * len(columns))})")  # fmt: skip
    with conn:
        for index in range(count):
            row = dict(zip(columns, first, strict=True))
            row.update(id=f"old-{index}", run_id=f"old-run-{index}",
                       scheduled_utc=instant_text(T0 - minutes(index + 1)))  # fmt: skip
            conn.execute(insert, [row[column] for column in columns])


def history_costs(tmp_path: Path, kept: int) -> tuple[int, int]:
    """A minutely routine with ``kept`` runs behind it, and a person's run waiting: the steps of
    Run now's look for that run, and of an overlap's look for the oldest moment waiting."""
    engine = make_engine(tmp_path / f"history-{kept}", VirtualClock(T0), max_active=1)
    routine = engine.add("minutely", "* * * * *")
    engine.run_until(T0 + minutes(1))
    with_history(engine, routine, kept)
    engine.runtime.auto_exit = None
    engine.operator.run_now("minutely")
    conn = engine.store.conn
    try:
        assert runs._manual_waiting(conn, routine, False) is not None  # found, as before
        return (
            vm_steps(conn, lambda: runs._manual_waiting(conn, routine, False)),
            vm_steps(conn, lambda: occurrences.oldest_waiting_id(conn, routine)),
        )
    finally:
        engine.store.close()


def test_what_run_now_and_an_overlap_read_does_not_grow_with_the_history(tmp_path: Path) -> None:
    """Through the routine's history, each read every occurrence the routine ever had (20 ms
    at the retention bound of 129,600); by the indexes of planned rows, only those."""
    (few_manual, few_oldest), (many_manual, many_oldest) = costs = [
        history_costs(tmp_path, kept) for kept in (10, 2000)
    ]
    assert many_manual <= GROWTH * few_manual, costs
    assert many_oldest <= GROWTH * few_oldest, costs


def test_a_pass_reads_past_a_first_page_it_passed_over(tmp_path: Path) -> None:
    """A pass reads the waiting rows a page at a time: when every row of the first page is
    passed over (here skipped: their routines were paused), it reads on and still fills the
    free slot in the same pass, never leaving the queue for a later wake-up."""
    engine = make_engine(tmp_path / "pages", VirtualClock(T0), max_active=1)
    engine.runtime.auto_exit = None  # the first command keeps the slot
    for index in range(occurrences.FIRST_PAGE + 3):
        engine.add(f"r{index:03d}", "1 12 * * *")
    engine.run_until(T0 + minutes(2))
    conn = engine.store.conn
    waiting = [row[0] for row in conn.execute(
        "SELECT r.name FROM occurrences o JOIN routines r ON r.id = o.routine_id "
        "WHERE o.state = 'planned' ORDER BY o.scheduled_utc, o.id"
    )]  # fmt: skip
    passed_over, after = waiting[: occurrences.FIRST_PAGE], waiting[occurrences.FIRST_PAGE]
    for name in passed_over:
        engine.operator.pause(name)
    [running] = engine.runtime.launches
    engine.runtime.finish(running)
    engine.scheduler.pass_once("run_finished")
    [(after_id,)] = conn.execute("SELECT id FROM routines WHERE name = ?", (after,))
    assert [launch.routine_id for launch in engine.runtime.launches[1:]] == [after_id]
    names = [row[0] for row in conn.execute(
        "SELECT r.name FROM occurrences o JOIN routines r ON r.id = o.routine_id "
        "WHERE o.reason = 'paused'"
    )]  # fmt: skip
    assert sorted(names) == sorted(passed_over)
    engine.store.close()
