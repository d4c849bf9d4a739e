"""What a pass costs in statements, counted (issue #9): a budget, so a change that adds reads
to every pass shows up here rather than as a slower benchmark nobody ran. Counts, not times:
they are exact and independent of the machine."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import apsw

from tests.core.conftest import T0, Engine, minutes
from tests.core.tracing import statements_run

OCCURRENCES = 30
#: Per occurrence of a minutely routine whose command ends at once: plan, claim, dispatch,
#: start, settle, in three transactions over two passes (33.2 here now, with the active count
#: read in the same statement as what waits — 32.3 over the benchmark's 200; 57.4 before issue
#: #9). The events, pass records and fence reads are all in it.
BUDGET = 34


def counted(conn: apsw.Connection, action: Callable[[], object]) -> Counter[str]:
    return Counter(statements_run(conn, action))


def test_an_occurrence_costs_no_more_statements_than_the_budget(engine: Engine) -> None:
    engine.add("minutely", "* * * * *")
    engine.run_until(T0)  # the startup pass: recovery, downtime, the lease
    statements = counted(engine.store.conn, lambda: engine.run_until(T0 + minutes(OCCURRENCES)))
    per_occurrence = sum(statements.values()) / OCCURRENCES
    assert per_occurrence <= BUDGET, statements.most_common(12)


def test_every_scheduler_transaction_still_reads_the_lease(engine: Engine) -> None:
    """The fence (DESIGN §9): renewing less often must not mean checking less often."""
    engine.add("minutely", "* * * * *")
    engine.run_until(T0)
    statements = counted(engine.store.conn, lambda: engine.run_until(T0 + minutes(5)))
    fence_reads = sum(n for sql, n in statements.items() if "FROM lease" in sql)
    assert fence_reads >= statements["BEGIN IMMEDIATE"] > 0
