"""``planning.segments``: which revision governs which stretch of time (DESIGN §5)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from coven_core.model import Revision, RevisionSpec
from coven_core.scheduling.decisions import segments
from coven_core.scheduling.routines import new_revision
from tests.core.conftest import T0, minutes

SPEC = RevisionSpec("cron:0 * * * *", "UTC", ("/bin/true",))


def revision(number: int, effective: datetime) -> Revision:
    return replace(new_revision("r", number, SPEC, T0, effective), effective_from=effective)


def windows(revisions: list[Revision], start: datetime, end: datetime) -> list[tuple]:
    return [(s.revision, s.start, s.end) for s in segments(revisions, start, end)]


def test_consecutive_revisions_split_the_window_at_each_edit() -> None:
    revisions = [revision(1, T0), revision(2, T0 + minutes(30)), revision(3, T0 + minutes(90))]
    assert windows(revisions, T0, T0 + minutes(120)) == [
        (1, T0, T0 + minutes(30)),
        (2, T0 + minutes(30), T0 + minutes(90)),
        (3, T0 + minutes(90), T0 + minutes(120)),
    ]


def test_a_revision_superseded_before_it_took_effect_governs_nothing() -> None:
    """Edited at 13:30, the clock steps back an hour, edited again at 12:30: revision 3 is in
    force from 12:30, revision 2 never was, and revision 1 only until 12:30."""
    revisions = [revision(1, T0), revision(2, T0 + minutes(90)), revision(3, T0 + minutes(30))]
    assert windows(revisions, T0, T0 + minutes(180)) == [
        (1, T0, T0 + minutes(30)),
        (3, T0 + minutes(30), T0 + minutes(180)),
    ]


def test_only_the_asked_window_is_split() -> None:
    revisions = [revision(1, T0), revision(2, T0 + minutes(30))]
    assert windows(revisions, T0 + minutes(40), T0 + minutes(50)) == [
        (2, T0 + minutes(40), T0 + minutes(50))
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=240), min_size=1, max_size=6),
       st.integers(min_value=0, max_value=240), st.integers(min_value=0, max_value=240))  # fmt: skip
def test_windows_never_overlap_and_the_newest_revision_wins(
    offsets: list[int], low: int, length: int
) -> None:
    revisions = [revision(n, T0 + minutes(m)) for n, m in enumerate(offsets, start=1)]
    start, end = T0 + minutes(low), T0 + minutes(low + length)
    found = segments(revisions, start, end)
    for earlier, later in pairwise(found):
        assert earlier.end <= later.start  # in time order, disjoint
    step = timedelta(minutes=1)
    instant = start
    while instant < end:  # every instant is governed by the newest revision in force by then
        in_force = [r.number for r in revisions if r.effective_from <= instant]
        governing = [s.revision for s in found if s.start <= instant < s.end]
        assert governing == ([max(in_force)] if in_force else [])
        instant += step
