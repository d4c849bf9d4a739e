"""``agenda.read``: one statement answers what the pass used to ask in six (issue #9)."""

from __future__ import annotations

from datetime import timedelta

from coven_core.scheduling import agenda, cancellation, occurrences, overrun, receipts
from coven_core.views.glance import earliest_due, scheduling_paused
from tests.core.conftest import T0, Engine, minutes


def separately(engine: Engine, generation: int) -> agenda.Agenda:
    conn, now = engine.store.conn, engine.clock.now_utc()
    return agenda.Agenda(
        bool(cancellation.to_send(conn, generation, ())),
        bool(receipts.due(conn, engine.store.data_dir, now, 8)),
        occurrences.earliest_retry(conn, now),
        receipts.earliest(conn, now),
        earliest_due(conn),
        scheduling_paused(conn),
        overrun.earliest(conn),
    )


def test_it_says_what_the_separate_queries_say(engine: Engine) -> None:
    engine.add("hourly", "0 * * * *")
    engine.run_until(T0 + minutes(1))
    ahead = agenda.read(engine.store.conn, engine.clock.now_utc(), 1)
    assert ahead == separately(engine, 1)
    assert ahead.next_due == T0 + timedelta(hours=1) and not ahead.paused


def test_it_sees_a_cancel_request_and_the_pause(engine: Engine) -> None:
    engine.runtime.auto_exit = None  # the command keeps running
    engine.add("hourly", "0 * * * *")
    engine.run_until(T0 + minutes(1))
    (run,) = engine.store.conn.execute("SELECT run_id FROM occurrences WHERE run_id IS NOT NULL")
    engine.operator.cancel(run[0])
    engine.operator.pause_all()
    ahead = agenda.read(engine.store.conn, engine.clock.now_utc(), 1)
    assert ahead == separately(engine, 1)
    assert ahead.cancels_requested and ahead.paused


def test_each_part_is_found_by_its_index(engine: Engine) -> None:
    plan = " ".join(
        str(row[3])
        for row in engine.store.conn.execute(
            "EXPLAIN QUERY PLAN " + agenda._SQL, {"now": "2026", "generation": 1}
        )
    )
    indexes = ("attempts_cancel", "deliveries_pending", "occurrences_between", "routines_due",
               "attempts_overrun")  # fmt: skip
    for index in indexes:
        assert index in plan, plan
    # The scans are of two small partial indexes: the active occurrences (whether a run keeps
    # the machine awake), at most max-active rows; and the runs between two attempts (the
    # earliest retry), however long the history and however many moments wait.
    bounded = plan.replace("SCAN CONSTANT ROW", "")
    for small in ("SCAN o USING INDEX occurrences_active",
                  "SCAN occurrences USING INDEX occurrences_between"):  # fmt: skip
        bounded = bounded.replace(small, "")
    assert "SCAN" not in bounded, plan
