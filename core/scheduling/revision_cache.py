"""A scheduler's routine revisions, read from the store and parsed once (DESIGN §5).

Revisions are immutable and a routine gains them only at its end, numbered in order, with
the routine row naming its newest (``routines.revision``). So a routine's cached list is
current exactly while its last number is the routine row's ``revision``: a pass, which has
just read the routine row, needs no revision query and no parsing when nothing was edited.
One cache per scheduler (per store): routine ids are unique within a store, not across stores.
"""

from __future__ import annotations

import apsw

from coven_core.model import Revision, Routine
from coven_core.scheduling import routines


class RevisionCache:
    def __init__(self, limit: int = 4096) -> None:
        self._limit = limit  # routines kept; beyond it the cache starts again (a bound, no LRU)
        self._by_routine: dict[str, tuple[tuple[Revision, ...], dict[int, Revision]]] = {}

    def of(self, conn: apsw.Connection, routine: Routine) -> tuple[Revision, ...]:
        """The routine's revisions, oldest first, as of the routine row given
        (:class:`routines.BrokenRevision` if they cannot be read)."""
        return self._entry(conn, routine)[0]

    def numbered(self, conn: apsw.Connection, routine: Routine, number: int) -> Revision:
        """The routine's revision ``number`` (KeyError if it has none such)."""
        return self._entry(conn, routine)[1][number]

    def _entry(
        self, conn: apsw.Connection, routine: Routine
    ) -> tuple[tuple[Revision, ...], dict[int, Revision]]:
        entry = self._by_routine.get(routine.id)
        if entry is None or entry[0][-1].number != routine.revision:
            revisions = tuple(routines.revisions_of(conn, routine))
            entry = revisions, {revision.number: revision for revision in revisions}
            if len(self._by_routine) >= self._limit:
                self._by_routine.clear()
            self._by_routine[routine.id] = entry
        return entry
