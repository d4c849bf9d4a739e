"""Rows per write transaction, steered by how long the last ones took (DESIGN §11, #9).

A retention sweep deletes in many short write transactions so that a claim never waits on it
noticeably. A fixed number of rows per transaction suits one machine and one store: the same
batch is a few milliseconds here and several times that on a slower disk, a colder page cache,
a laptop in power saving, or a table with more indexes. A :class:`Pace` instead aims each
transaction at :data:`TARGET_HOLD` of work, measured, and sizes the next one from it.
"""

from __future__ import annotations

import math

TARGET_HOLD = 0.002
"""Seconds of work one transaction aims at: a fifth of the hold that bench_retention's rows
"retention …: longest write-lock hold" allow, which leaves the rest for what no batch size
controls (a disk stall, a preempted thread)."""


class Pace:
    """How many rows the next transaction takes; never more than ``ceiling``, never none."""

    def __init__(self, ceiling: int, target: float = TARGET_HOLD) -> None:
        if ceiling < 1:
            raise ValueError("a pace needs a ceiling of at least one row")
        self.ceiling, self.target = ceiling, target
        self.rows = max(1, ceiling // 2)  # until a transaction has been timed

    def note(self, rows: int, held: float) -> None:
        """A transaction took ``held`` seconds for ``rows`` rows: size the next one.

        It moves halfway, in ratio, toward the size that would have met the target, so one
        slow transaction (a stall) at most roughly halves the next rather than collapsing
        it, and a run of fast ones grows it back within a few transactions."""
        if rows < 1 or held <= 0:
            return
        fitting = min(4 * self.ceiling, rows * self.target / held)  # not inf for a held of ~0
        self.rows = max(1, min(self.ceiling, round(math.sqrt(self.rows * fitting))))
