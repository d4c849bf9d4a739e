"""What is left for a pass once it has planned and claimed, read in one statement (§3, §11).

After claiming, a pass needs to know whether any cancel request waits to be sent and any
delivery is due, and when it must next wake: the earliest retry, delivery retry, routine
due (none while all scheduling is paused) and running attempt to start overrunning, and
whether a run keeps the machine awake. Each is a
cheap indexed lookup, but seven statements a pass cost more in their calls than in their
work, so they are asked together; the detailed queries (:func:`cancellation.to_send`,
:func:`receipts.due`) run only when there is something to find. The SQL of each part stays
with the module that owns its table.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import apsw

from coven_core.scheduling import awake, cancellation, occurrences, overrun, receipts
from coven_core.store.codec import instant_text, maybe_instant_from
from coven_core.store.query import one
from coven_core.views import glance

_SQL = (
    f"SELECT {cancellation.ANY_REQUESTED}, {receipts.ANY_DUE}, {occurrences.EARLIEST_RETRY}, "
    f"{receipts.EARLIEST}, {glance.EARLIEST_DUE}, {glance.SCHEDULING_PAUSED}, "
    f"{overrun.EARLIEST}, {awake.ANY_KEEP_AWAKE}"
)


@dataclass(frozen=True)
class Agenda:
    cancels_requested: bool  # a cancel request of this generation's attempts, sent or not
    deliveries_due: bool
    next_retry: datetime | None
    next_delivery: datetime | None
    next_due: datetime | None  # of an active routine (whether scheduling is paused or not)
    paused: bool  # all scheduling (``coven pause --all``)
    next_overrun: datetime | None = None  # a running attempt's; paused or not
    keep_awake: bool = False  # an active run's routine keeps the machine awake (§14)


def read(conn: apsw.Connection, now: datetime, generation: int) -> Agenda:
    """Inside the pass's transaction, after its claims."""
    cancels, deliveries, retry, delivery, due, paused, overrun_at, keep_awake = one(
        conn, _SQL, {"now": instant_text(now), "generation": generation}
    )
    return Agenda(
        bool(cancels), bool(deliveries), maybe_instant_from(retry), maybe_instant_from(delivery),
        maybe_instant_from(due), bool(paused), maybe_instant_from(overrun_at), bool(keep_awake),
    )  # fmt: skip
